package registry

import (
	"encoding/json"
	"errors"
	"fmt"
	"testing"
)

// step is one record to apply at the next offset.
type step struct {
	key, value string // value "" = tombstone
	bad        bool   // apply must refuse it as ErrBadRecord
}

func schemaRec(subject string, version, id int, seq string, deleted bool) step {
	key := fmt.Sprintf(`{"keytype":"SCHEMA","subject":%q,"version":%d,"magic":1%s}`, subject, version, seq)
	return step{key: key, value: fmt.Sprintf(`{"subject":%q,"version":%d,"id":%d,"schema":"\"int%d\"","deleted":%v}`, subject, version, id, id, deleted)}
}

func seqAt(n int) string { return fmt.Sprintf(`,"seq":%d,"node":"x"`, n) }

// state summarises a view: per subject its versions with id and
// deletion, the ids known, the levels and modes.
func state(v *view) string {
	out := ""
	for _, s := range v.subjectNames(true, "") {
		out += s + ":"
		for _, ver := range v.versions(s, true) {
			st := v.version(s, ver, true)
			out += fmt.Sprintf(" v%d=%d", ver, st.id)
			if st.deleted {
				out += "(deleted)"
			}
		}
		out += "; "
	}
	for id := 1; id <= v.maxID; id++ {
		if v.schemas[id] != nil {
			out += fmt.Sprintf("id%d ", id)
		}
	}
	return out + fmt.Sprintf("max=%d config=%s mode=%s", v.maxID, v.config, v.effectiveMode(""))
}

func TestRegistryViewApply(t *testing.T) {
	for _, tc := range []struct {
		name  string
		steps []step
		want  string
	}{
		{"unsequenced records apply", []step{schemaRec("s", 1, 1, "", false), schemaRec("s", 2, 2, "", false)},
			"s: v1=1 v2=2; id1 id2 max=2 config= mode=READWRITE"},
		{"a sequenced record counts at its own offset only", []step{
			schemaRec("s", 1, 1, seqAt(0), false), // offset 0: counts
			schemaRec("s", 1, 2, seqAt(0), false), // offset 1: lost the race
			schemaRec("s", 2, 2, seqAt(2), false), // offset 2: counts
		}, "s: v1=1 v2=2; id1 id2 max=2 config= mode=READWRITE"},
		{"a soft delete rewrites the version", []step{schemaRec("s", 1, 1, "", false), schemaRec("s", 1, 1, seqAt(1), true)},
			"s: v1=1(deleted); id1 max=1 config= mode=READWRITE"},
		{"a tombstone of any key variant deletes for good", []step{
			schemaRec("s", 1, 1, seqAt(0), false), schemaRec("s", 1, 1, seqAt(1), true), schemaRec("s", 2, 2, seqAt(2), false),
			{key: `{"keytype":"SCHEMA","subject":"s","version":1,"magic":1,"seq":0,"node":"x"}`},
		}, "s: v2=2; id2 max=2 config= mode=READWRITE"},
		{"delete subject up to a version", []step{
			schemaRec("s", 1, 1, "", false), schemaRec("s", 2, 2, "", false),
			{key: `{"keytype":"DELETE_SUBJECT","subject":"s","magic":0}`, value: `{"subject":"s","version":1}`},
			schemaRec("s", 3, 3, "", false),
		}, "s: v1=1(deleted) v2=2 v3=3; id1 id2 id3 max=3 config= mode=READWRITE"},
		{"a delete that lost its race does nothing", []step{
			schemaRec("s", 1, 1, "", false),
			{key: `{"keytype":"DELETE_SUBJECT","subject":"s","magic":0,"seq":0,"node":"x"}`, value: `{"subject":"s","version":1}`},
		}, "s: v1=1; id1 max=1 config= mode=READWRITE"},
		{"config and mode: last writer wins, tombstone clears", []step{
			{key: `{"keytype":"CONFIG","subject":null,"magic":0}`, value: `{"compatibilityLevel":"FULL"}`},
			{key: `{"keytype":"CONFIG","subject":null,"magic":0}`, value: `{"compatibilityLevel":"none"}`},
			{key: `{"keytype":"MODE","subject":null,"magic":0}`, value: `{"mode":"READONLY"}`},
			{key: `{"keytype":"MODE","subject":null,"magic":0}`},
		}, "max=0 config=NONE mode=READWRITE"},
		{"one id shared by two subjects survives one's deletion", []step{
			schemaRec("a", 1, 1, "", false), schemaRec("b", 1, 1, "", false),
			{key: `{"keytype":"SCHEMA","subject":"a","version":1,"magic":1}`},
		}, "b: v1=1; id1 max=1 config= mode=READWRITE"},
		{"an empty references list is none: one id for one schema", []step{
			{key: `{"keytype":"SCHEMA","subject":"a","version":1,"magic":1}`, value: `{"subject":"a","version":1,"id":1,"schema":"x","references":[]}`},
			{key: `{"keytype":"SCHEMA","subject":"b","version":1,"magic":1}`, value: `{"subject":"b","version":1,"id":1,"schema":"x"}`},
		}, "a: v1=1; b: v1=1; id1 max=1 config= mode=READWRITE"},
		{"unreadable records are skipped", []step{
			{key: `{"keytype":"SCHEMA","subject":"s","version":1,"magic":1}`, value: `{"subject":"t","version":1,"id":1,"schema":"x"}`, bad: true},
			{key: `{"keytype":"SCHEMA","subject":"s","version":1,"magic":1}`, value: `not json`, bad: true},
			{key: `not json`, value: `{}`, bad: true},
			{key: `{"keytype":"CONFIG","subject":null,"magic":0}`, value: `{"compatibilityLevel":"SIDEWAYS"}`, bad: true},
			{key: `{"keytype":"MODE","subject":null,"magic":0}`, value: `{"mode":"NAP"}`, bad: true},
			schemaRec("s", 1, 1, "", false),
			{key: `{"keytype":"SCHEMA","subject":"s","version":2,"magic":1}`, value: `{"subject":"s","version":2,"id":1,"schema":"other"}`, bad: true},
			{key: `{"keytype":"NOOP","magic":0}`},
		}, "s: v1=1; id1 max=1 config= mode=READWRITE"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := newView()
			for i, s := range tc.steps {
				var value []byte
				if s.value != "" {
					value = []byte(s.value)
				}
				err := v.apply(int64(i), []byte(s.key), value)
				if s.bad != errors.Is(err, ErrBadRecord) || (!s.bad && err != nil) {
					t.Fatalf("step %d (%s): err %v, want bad=%v", i, s.key, err, s.bad)
				}
			}
			if got := state(v); got != tc.want {
				t.Fatalf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}

// FuzzRegistryApply feeds the view records of any shape: it must never panic and
// every version must name an id the view holds.
func FuzzRegistryApply(f *testing.F) {
	for _, s := range []step{schemaRec("s", 1, 1, seqAt(0), false), schemaRec("s", 1, 2, "", true),
		{key: `{"keytype":"DELETE_SUBJECT","subject":"s","magic":0}`, value: `{"subject":"s","version":1}`},
		{key: `{"keytype":"CONFIG","subject":null,"magic":0}`, value: `{"compatibilityLevel":"FULL"}`}} {
		f.Add([]byte(s.key), []byte(s.value), []byte(schemaRec("s", 1, 1, "", false).key), []byte(nil))
	}
	f.Fuzz(func(t *testing.T, k1, v1, k2, v2 []byte) {
		v := newView()
		_ = v.apply(0, k1, v1)
		_ = v.apply(1, k2, v2)
		_ = v.apply(2, k1, nil)
		for name, s := range v.subjects {
			for ver, st := range s.versions {
				if v.schemas[st.id] == nil {
					t.Fatalf("%s v%d names id %d, which the view lacks", name, ver, st.id)
				}
			}
		}
		if _, err := json.Marshal(state(v)); err != nil {
			t.Fatal(err)
		}
	})
}
