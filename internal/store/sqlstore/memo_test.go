package sqlstore

import (
	"testing"
	"time"
)

type fakeMarker struct {
	m  Mark
	ok bool
}

func (f *fakeMarker) Mark() (Mark, bool) { return f.m, f.ok }
func (f *fakeMarker) MarkErr() error     { return nil }

// The memo answers only under the mark its entries were read at, never
// with an entry read before a commit, and not past memoLifetime.
func TestVersionMemo(t *testing.T) {
	t.Parallel()
	mk := &fakeMarker{ok: true}
	now := time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)
	vm := newVersionMemo(mk, func() time.Time { return now })
	a, b := versionKey{"c1", "u"}, versionKey{"c2", "u"}
	_, found, m1, ok := vm.get(a)
	if found || !ok {
		t.Fatalf("an empty memo answered (found %v, ok %v)", found, ok)
	}
	vm.put(a, m1, memoVersion{"ua", 1, now})
	vm.put(b, m1, memoVersion{"ub", 1, now})
	if v, found, _, _ := vm.get(b); !found || v.userID != "ub" || v.version != 1 {
		t.Fatalf("under an unchanged mark: %+v, %v", v, found)
	}
	if v, _, _, _ := vm.get(a); v.userID != "ua" {
		t.Fatalf("a's entry is %+v: keys mix developers", v)
	}

	mk.m[8]++ // a commit
	_, found, m2, _ := vm.get(a)
	if found {
		t.Fatal("answered after the mark changed")
	}
	vm.put(a, m2, memoVersion{"ua", 2, now})
	if _, found, _, _ := vm.get(b); found {
		t.Fatal("b's entry, read before the commit, answered after it")
	}
	// A slow read that began before the commit is not kept.
	vm.put(b, m1, memoVersion{"ub", 1, now})
	if _, found, _, _ := vm.get(b); found {
		t.Fatal("an entry read under an older mark answered under the newer one")
	}
	// Nor one whose mark changed while it was read.
	_, _, m3, _ := vm.get(b)
	mk.m[8]++
	vm.put(b, m3, memoVersion{"ub", 3, now})
	mk.m[8]--
	if _, found, _, _ := vm.get(b); found {
		t.Fatal("an entry whose mark changed during its read was kept")
	}

	// Old entries expire even under an unchanged mark.
	if _, found, _, _ := vm.get(a); !found {
		t.Fatal("a's entry is gone under its own mark")
	}
	now = now.Add(memoLifetime)
	if _, found, _, _ := vm.get(a); found {
		t.Fatalf("an entry %s old answered", memoLifetime)
	}

	mk.ok = false
	if _, found, _, ok := vm.get(a); found || ok {
		t.Fatal("answered without a mark")
	}
}
