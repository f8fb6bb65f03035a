package segsum

import (
	"math"
	"reflect"
	"testing"
	"unsafe"

	"github.com/txnscope/txnscope/scenario/gen"
)

// TestPackedHoldsNoPointers: a window's decisions are kept without
// pointers, so that the collector's mark phase does not read the windows a
// server holds (up to --max-memory); a field that brings a pointer back
// fails here.
func TestPackedHoldsNoPointers(t *testing.T) {
	var walk func(path string, ty reflect.Type)
	walk = func(path string, ty reflect.Type) {
		switch ty.Kind() {
		case reflect.Struct:
			for i := range ty.NumField() {
				f := ty.Field(i)
				walk(path+"."+f.Name, f.Type)
			}
		case reflect.Array:
			walk(path+"[]", ty.Elem())
		case reflect.Pointer, reflect.Slice, reflect.Map, reflect.String, reflect.Interface,
			reflect.Func, reflect.Chan, reflect.UnsafePointer:
			t.Errorf("%s is a %s: the collector would read every window's decisions", path, ty.Kind())
		}
	}
	walk("packed", reflect.TypeFor[packed]())
	if n := unsafe.Sizeof(packed{}); n > 64 {
		t.Errorf("a packed decision takes %d bytes, more than 64", n)
	}
}

// TestIndexIn: the index of an element of a slice from its pointer, -1 for
// nil, and a panic for a pointer into another array (a bug of the pass).
func TestIndexIn(t *testing.T) {
	s := make([]int64, 5)
	for i := range s {
		if got := indexIn(s, &s[i]); got != int32(i) {
			t.Errorf("indexIn(&s[%d]) = %d", i, got)
		}
	}
	if got := indexIn(s, nil); got != -1 {
		t.Errorf("indexIn(nil) = %d, want -1", got)
	}
	other := make([]int64, 5)
	for _, p := range []*int64{&other[0], new(int64)} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("indexIn of a pointer outside the slice did not panic")
				}
			}()
			indexIn(s, p)
		}()
	}
	defer func() {
		if recover() == nil {
			t.Errorf("indexIn into an empty slice did not panic")
		}
	}()
	indexIn([]int64{}, &other[1])
}

// TestLoadBytesFrom: the estimate of a load from a position counts the
// segments from the one holding it to the end: the whole partition's from
// the log start, one segment's from the last one's base or past the end.
func TestLoadBytesFrom(t *testing.T) {
	dir := genPartition(t, gen.LogOptions{SegmentBytes: 24 << 10, BatchBytes: 512, TotalBytes: 240 << 10, HangingFrom: -1, Seed: 9})
	st, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	n := len(st.segs)
	if n < 8 {
		t.Fatalf("%d segments, want at least 8", n)
	}
	whole, mid, last, past := st.WholeLoadBytes(), st.LoadBytesFrom(st.segs[n/2].base+1), st.LoadBytesFrom(st.segs[n-1].base), st.LoadBytesFrom(math.MaxInt64)
	// 512-byte batches, 128 bytes of memory each: a quarter of the bytes.
	if size := st.Bytes(); whole < size/5 || whole > size/3 {
		t.Errorf("whole load of %d bytes of segments estimated at %d bytes", size, whole)
	}
	if st.LoadBytesFrom(math.MinInt64) != whole || st.LoadBytesFrom(0) != whole {
		t.Errorf("from the log start: %d and %d, want the whole load's %d", st.LoadBytesFrom(math.MinInt64), st.LoadBytesFrom(0), whole)
	}
	if !(last > 0 && last < mid && mid < whole) || past != last {
		t.Errorf("whole %d, from the middle %d, from the last segment %d, past the end %d: want whole > middle > last = past > 0", whole, mid, last, past)
	}
}
