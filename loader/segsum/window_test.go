package segsum

import (
	"reflect"
	"testing"
	"unsafe"
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
