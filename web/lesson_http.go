package web

// The lesson pages: query parsing, the live and embedded handlers and the
// static page of export (lesson.go builds the steps).

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"

	"github.com/txnscope/txnscope/diagnosis"
	"github.com/txnscope/txnscope/internal/pathname"
	"github.com/txnscope/txnscope/present"
	"github.com/txnscope/txnscope/static"
	"github.com/txnscope/txnscope/txnindex"
)

// LessonView is the lesson page (and the lesson panel of an embed or an
// export).
type LessonView struct {
	Timeline TimelineView
	Lesson   *Lesson
	Data     string // LessonJSON
	Quiz     bool
	Step     int
	Autoplay int // ms between steps; 0 = off
	Assets   LessonAssets
	Href     string // the partition's timeline, "" in an export
	// Follow: the timeline on the page draws the log as of the step from
	// the start (the embed); otherwise (an export, whose timeline is first
	// the whole partition) once the learner steps.
	Follow bool
}

// LessonAssets are lesson.js and lesson.css, linked or (export) inlined.
type LessonAssets struct {
	CSS, JS         string
	CSSText, JSText string
}

func lessonAssets() LessonAssets {
	return LessonAssets{CSS: static.Path("css/lesson.css"), JS: static.Path("js/lesson.js")}
}

// lessonQuery reads ?step=, ?quiz=, ?autoplay=, ?interval= and ?position=.
// A bad value is an error the handler reports as 400.
func lessonQuery(r *http.Request, v *LessonView) (from int64, err error) {
	q := r.URL.Query()
	from = -1
	if s := q.Get("position"); s != "" {
		if from, err = strconv.ParseInt(s, 10, 64); err != nil {
			return 0, fmt.Errorf("position %q is not an offset", s)
		}
	}
	if s := q.Get("step"); s != "" {
		if v.Step, err = strconv.Atoi(s); err != nil || v.Step < 0 {
			return 0, fmt.Errorf("step %q is not a step number", s)
		}
	}
	v.Quiz = q.Get("quiz") == "1"
	if q.Get("autoplay") == "1" {
		v.Autoplay = 1500
		if s := q.Get("interval"); s != "" {
			ms, err := strconv.Atoi(s)
			if err != nil || ms < 200 || ms > 60000 {
				return 0, fmt.Errorf("interval %q: want milliseconds from 200 to 60000", s)
			}
			v.Autoplay = ms
		}
	}
	return from, nil
}

func (u *UI) lessonView(w http.ResponseWriter, r *http.Request) (*LessonView, bool) {
	id, topic := r.PathValue("id"), r.PathValue("topic")
	p, err := strconv.ParseInt(r.PathValue("partition"), 10, 32)
	if err != nil {
		http.Error(w, "partition is not a number", http.StatusBadRequest)
		return nil, false
	}
	l, ok := u.cat.Log(id, topic, int32(p))
	if !ok {
		http.Error(w, "no partition "+topic+"-"+strconv.FormatInt(p, 10)+" in source "+strconv.Quote(id), http.StatusNotFound)
		return nil, false
	}
	if u.seekRedirect(w, r, id) {
		return nil, false
	}
	if why := u.refused(id, topic, int32(p)); why != "" {
		// Only the tail and one segment's window at a time can be read:
		// a lesson plays the partition from its first batch, so it is
		// not offered rather than played over part of the log.
		name := topic + "-" + strconv.FormatInt(p, 10)
		render(w, r, UnavailablePage(UnavailableView{Title: "No lesson for " + name,
			Why:  "The lesson, the quiz and the embedded lesson play a partition batch by batch from its first batch, so they need it loaded whole, which it is not: " + why + ". Its page shows it one segment at a time.",
			Href: PartitionPath(id, topic, int32(p)), Link: "Open " + name + " segment by segment"}))
		return nil, false
	}
	if pc, ok := u.cat.(Partial); ok {
		if why := pc.Partial(id, topic, int32(p)); why != "" {
			name := topic + "-" + strconv.FormatInt(p, 10)
			render(w, r, UnavailablePage(UnavailableView{Title: "No lesson for " + name + " yet",
				Why:  "The lesson, the quiz and the embedded lesson play a partition batch by batch from its first batch, and only its tail has been read yet: " + why + ". Reload this page when it is done.",
				Href: PartitionPath(id, topic, int32(p)), Link: "Open " + name + " (its tail until then)"}))
			return nil, false
		}
	}
	v := &LessonView{Timeline: timelineView(id, "", l), Assets: lessonAssets(), Href: PartitionPath(id, topic, int32(p))}
	from, err := lessonQuery(r, v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return nil, false
	}
	vr, err := LessonVariant(r.URL.Query().Get("variant"))
	if err != nil {
		http.Error(w, "variant: "+err.Error(), http.StatusBadRequest)
		return nil, false
	}
	v.Lesson = NewLessonFor(id, l, from, vr)
	v.Step = min(v.Step, len(v.Lesson.Steps)-1)
	b, err := LessonJSON(v.Lesson)
	if err != nil {
		http.Error(w, "internal error", http.StatusInternalServerError)
		return nil, false
	}
	v.Data = string(b)
	return v, true
}

// Partial is a Catalog some of whose partitions are served from their
// tail while their full load runs (a lazily loaded log directory's).
type Partial interface {
	// Partial says, in words, why Log returned the partition's tail
	// only; "" when it returned the whole log.
	Partial(id, topic string, partition int32) string
}

// UnavailableView is the page of a lesson not offered for a partition:
// why, and a link to where the partition can be seen.
type UnavailableView struct {
	Title, Why, Href, Link string
}

// Lesson serves /lessons/{id}/{topic}/{partition}: the step-through, or
// with ?quiz=1 the quiz; ?step=N opens step N.
func (u *UI) Lesson() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		v, ok := u.lessonView(w, r)
		if !ok {
			return
		}
		for _, s := range u.cat.Sources() {
			if s.ID == v.Lesson.Source {
				v.Timeline.Title = s.Title
			}
		}
		v.Follow = true
		render(w, r, LessonPage(*v))
	})
}

// LessonEmbed serves /embed/{id}/{topic}/{partition}: the timeline alone
// for an iframe (see Embed), and with ?step=N or ?autoplay=1 the lesson
// panel under it, starting at step N and, with autoplay, stepping every
// ?interval= ms (default 1500).
func (u *UI) LessonEmbed() http.Handler {
	plain := u.Embed()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if !q.Has("step") && q.Get("autoplay") != "1" && q.Get("quiz") != "1" {
			plain.ServeHTTP(w, r)
			return
		}
		v, ok := u.lessonView(w, r)
		if !ok {
			return
		}
		v.Timeline.Chrome, v.Follow = chromeNone, true
		render(w, r, LessonEmbedPage(*v))
	})
}

// StaticLessonPage is StaticPage with the lesson panel: the step list is
// inlined with the timeline's data, lesson.js and lesson.css with the
// other assets.
// note, when not "", says what the embedded data leaves out (api.ExportData's
// Note); the page shows it under the summary.
func StaticLessonPage(ctx context.Context, w io.Writer, id, title string, l *txnindex.Log, d *diagnosis.Diagnosis, data []byte, note string, ls *Lesson) error {
	v, err := staticTimelineView(id, title, l, d, data)
	if err != nil {
		return err
	}
	v.ExportNote = note
	lv := LessonView{Timeline: v, Lesson: ls}
	if lv.Assets.CSSText, err = readAsset("css/lesson.css", "</style"); err != nil {
		return err
	}
	if lv.Assets.JSText, err = readAsset("js/lesson.js", "</script"); err != nil {
		return err
	}
	b, err := LessonJSON(ls)
	if err != nil {
		return err
	}
	lv.Data = string(b)
	return LessonStaticPage(lv).Render(ctx, w)
}

// quizChoices are the verdicts a quiz offers: it asks at the step where the
// consumer decides a batch it fetched, so never pending nor
// before_position (and gaps are not batches).
var quizChoices = []string{"delivered", "aborted", "control"}

// quizChoiceWords is a choice's button label: the verdict in words
// (present.VerdictWords, "control marker").
func quizChoiceWords(name string) string {
	for v := txnindex.Verdict(0); v < 16; v++ {
		if v.String() == name {
			return present.VerdictWords(v)
		}
	}
	return name
}

func lessonTitle(v LessonView) string {
	if v.Quiz {
		return "Quiz " + v.Timeline.Name
	}
	return "Lesson " + v.Timeline.Name
}

func lessonMode(v LessonView) string {
	if v.Quiz {
		return "quiz"
	}
	return "lesson"
}

func lessonConsumerLabel(v LessonView) string {
	return v.Lesson.Isolation + ", " + v.Lesson.Rules + ", from offset " + i64(v.Lesson.Position)
}

// LessonPath is the lesson URL of a partition.
func LessonPath(id, topic string, partition int32) string {
	return "/lessons/" + pathname.Segment(id) + "/" + pathname.Segment(topic) + "/" + strconv.Itoa(int(partition))
}

func lessonPath(v LessonView) string {
	return LessonPath(v.Timeline.Source, v.Timeline.Topic, v.Timeline.Partition)
}

// lessonLink is the lesson's page with query q (its step or quiz) and the
// consumer rules it plays, when not the Java consumer's.
func lessonLink(v LessonView, q string) string {
	if v.Lesson != nil && v.Lesson.Variant != "" && v.Lesson.Variant != txnindex.VariantJava.String() {
		q += "&variant=" + v.Lesson.Variant
	}
	return lessonPath(v) + "?" + q
}

// embedSnippet is the iframe a page pastes to show the lesson at step 1.
func embedSnippet(v TimelineView) string {
	src := v.Origin + EmbedPath(v.Source, v.Topic, v.Partition) + "?step=1"
	// As wide as the page's column up to 1,200 px, and as tall as
	// the lesson needs but never taller than the reader's window: no
	// fixed size that overflows a phone or a narrow column.
	return `<iframe src="` + src + `" title="` + v.Name + ` lesson" loading="lazy" style="display:block;width:100%;max-width:1200px;height:min(820px,90vh);border:1px solid #ccc"></iframe>`
}

// EmbedPath is the embed URL of a partition.
func EmbedPath(id, topic string, partition int32) string {
	return "/embed/" + pathname.Segment(id) + "/" + pathname.Segment(topic) + "/" + strconv.Itoa(int(partition))
}

// requestOrigin is the scheme://host the browser reached the server at.
func requestOrigin(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

// LessonsView is the /lessons page.
type LessonsView struct {
	Assets Assets
	Rows   []LessonsRow
	// Cases are lessons about one question, each a demo's lesson played
	// with the consumer rules that show it.
	Cases []LessonCase
}

// LessonCase is one such lesson: its question and its link.
type LessonCase struct {
	TestID, Question, What, Lesson string
}

// LessonsRow is one partition's lesson links.
type LessonsRow struct {
	ID, Title, Name         string
	Timeline, Lesson, Embed string
}

// Lessons serves /lessons: every partition's lesson, quiz and embed.
func (u *UI) Lessons() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		v := LessonsView{Assets: assets()}
		for _, s := range u.cat.Sources() {
			for _, p := range s.Partitions {
				v.Rows = append(v.Rows, LessonsRow{ID: s.ID, Title: s.Title, Name: p.Topic + "-" + strconv.Itoa(int(p.Partition)),
					Timeline: PartitionPath(s.ID, p.Topic, p.Partition), Lesson: LessonPath(s.ID, p.Topic, p.Partition), Embed: EmbedPath(s.ID, p.Topic, p.Partition)})
			}
		}
		for _, s := range u.cat.Sources() {
			if s.ID == "interleaved" && len(s.Partitions) == 1 {
				p := s.Partitions[0]
				v.Cases = append(v.Cases, LessonCase{TestID: "lessons-case-rolled-back", Question: "Why your service processed a rolled-back order",
					What:   "the interleaved demo played by kafka-go, which delivers the records of an aborted transaction that a Java read_committed consumer skips, step by step and why",
					Lesson: LessonPath(s.ID, p.Topic, p.Partition) + "?variant=" + txnindex.VariantKafkaGo.String()})
			}
		}
		render(w, r, LessonsPage(v))
	})
}
