package server

import (
	"errors"
	"fmt"
	"slices"

	"github.com/txnscope/txnscope/api"
	"github.com/txnscope/txnscope/loader/input"
	"github.com/txnscope/txnscope/loader/load"
	"github.com/txnscope/txnscope/web"
)

// uploadOptions are serve's limits on POST /api/v1/uploads; the zero value
// disables uploads.
type uploadOptions struct {
	api.UploadLimits
	maxUploads int // --max-uploads: uploads kept at once, the oldest evicted past it
	maxSources int // --max-sources: partitions served at once, uploads included
	maxMemory  int64
}

// uploadCatalog adds uploads (api.Uploads serves POST /api/v1/uploads) to
// the catalog, within serve's limits.
type uploadCatalog struct {
	*catalog
	maxUploads int // --max-uploads: uploads kept at once, the oldest evicted past it
	maxSources int // --max-sources: partitions served at once, uploads included
	// maxMemory is --max-upload-memory: the most memory the kept uploads
	// may hold together (load.Cost.Memory), the oldest evicted past it; 0 is
	// no bound.
	maxMemory int64
}

// AddUpload makes a source upload-N of each partition c holds and puts
// them in the catalog, evicting the oldest uploads to make room
// (putUpload).
func (c uploadCatalog) AddUpload(name string, in *input.Contents, problems []string) (api.Upload, error) {
	cost := load.CostOf(in)
	if p := load.Choose(load.Question{Kind: load.Whole}, cost, load.Budget{MaxKept: c.maxMemory}); p.Path == load.Refused {
		return api.Upload{}, fmt.Errorf("%w: %s", api.ErrUploadTooLarge, p.Why)
	}
	mem := cost.Memory()
	srcs, evicted, err := c.putUpload(func(n int) []*source {
		srcs := sourcesOf(fmt.Sprintf("upload-%d", n), name, in)
		for i, s := range srcs {
			s.upload, s.problems = n, problems
			if i == 0 {
				s.mem = mem // counted once per upload
			}
		}
		return srcs
	}, c.maxUploads, c.maxSources, c.maxMemory)
	if err != nil {
		return api.Upload{}, err
	}
	up := api.Upload{ID: srcs[0].id, Title: srcs[0].title}
	for _, s := range srcs {
		page := web.PartitionPath(s.id, s.topic, s.partition)
		up.Partitions = append(up.Partitions, api.UploadPartition{Topic: s.topic, Partition: s.partition, URL: page, API: "/api/v1" + page})
	}
	for _, s := range evicted {
		if len(up.Evicted) == 0 || up.Evicted[len(up.Evicted)-1].ID != s.id {
			up.Evicted = append(up.Evicted, api.EvictedUpload{ID: s.id, Title: s.title})
		}
	}
	return up, nil
}

// errCatalogFull is an upload that cannot fit even with every older upload
// evicted.
var errCatalogFull = errors.New("no room")

// putUpload numbers an upload and adds the sources made for that number.
// Numbering under the same lock as the eviction keeps "oldest" meaning
// "lowest number": an upload numbered earlier but added later could
// otherwise outlive a newer one. When the catalog already holds
// maxUploads uploads, or the new partitions would bring it past
// maxSources, the oldest uploads are evicted first, whole, and returned:
// a person dropping files one after another wants the newest, and the
// server's memory stays bounded without asking anyone to clean up. The
// demos, --load and live sources are never evicted; an upload that does
// not fit beside them is refused.
func (c *catalog) putUpload(sources func(n int) []*source, maxUploads, maxSources int, maxMemory int64) (srcs, evicted []*source, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.uploads++
	srcs = sources(c.uploads)
	var mem int64
	for _, s := range srcs {
		mem += s.mem
	}
	kept := slices.Clone(c.list())
	for {
		oldest, uploads := 0, map[int]bool{}
		held := mem
		for _, s := range kept {
			held += s.mem
			if s.upload > 0 {
				uploads[s.upload] = true
				if oldest == 0 || s.upload < oldest {
					oldest = s.upload
				}
			}
		}
		if len(uploads) < maxUploads && len(kept)+len(srcs) <= maxSources && (maxMemory <= 0 || held <= maxMemory) {
			break
		}
		if oldest == 0 && maxMemory > 0 && held > maxMemory {
			return nil, nil, fmt.Errorf("%w: about %s in memory beside the others, over serve --max-upload-memory %s", api.ErrUploadTooLarge, web.FormatBytes(mem), web.FormatBytes(maxMemory))
		}
		if oldest == 0 {
			return nil, nil, fmt.Errorf("%w: its %d partitions and the %d served would pass --max-sources %d", errCatalogFull, len(srcs), len(kept), maxSources)
		}
		kept = slices.DeleteFunc(kept, func(s *source) bool {
			if s.upload == oldest {
				evicted = append(evicted, s)
				return true
			}
			return false
		})
	}
	c.store(append(kept, srcs...))
	return srcs, evicted, nil
}
