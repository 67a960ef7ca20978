package cluster

import (
	"errors"
	"reflect"
	"testing"
)

func TestApplyUpdateController(t *testing.T) {
	ls := []ControllerListener{{Name: "CONTROLLER", Addr: "10.0.0.2:9093"}, {Name: "PLAIN", Addr: "10.0.0.2:9094"}}
	members := []Controller{{ID: 1}, {ID: 2, Addr: "127.0.0.1:9002", DirectoryID: TopicID{2}}, {ID: 3, Learner: true}}
	for _, tc := range []struct {
		name    string
		state   []Controller
		rec     UpdateController
		want    []Controller
		wantErr error
	}{
		{
			name:  "recorded voter",
			state: members,
			rec:   UpdateController{ID: 2, DirectoryID: TopicID{2}, Addr: "10.0.0.2:9093", Listeners: ls, KRaftMax: 1},
			want:  []Controller{{ID: 1}, {ID: 2, Addr: "10.0.0.2:9093", DirectoryID: TopicID{2}, Listeners: ls, KRaftMax: 1}, {ID: 3, Learner: true}},
		},
		{
			name:  "bootstrap voter takes the directory id",
			state: members,
			rec:   UpdateController{ID: 1, DirectoryID: TopicID{9}, Addr: "10.0.0.1:9093"},
			want:  []Controller{{ID: 1, Addr: "10.0.0.1:9093", DirectoryID: TopicID{9}}, members[1], members[2]},
		},
		{
			name: "no membership yet: seeded from the voters",
			rec:  UpdateController{ID: 3, DirectoryID: TopicID{3}, Addr: "10.0.0.3:9093", Voters: []int32{1, 2, 3}},
			want: []Controller{{ID: 1}, {ID: 2}, {ID: 3, Addr: "10.0.0.3:9093", DirectoryID: TopicID{3}}},
		},
		{
			name:    "seed ignored once the log holds a membership",
			state:   members,
			rec:     UpdateController{ID: 4, Addr: "10.0.0.4:9093", Voters: []int32{1, 2, 3, 4}},
			wantErr: ErrControllerNotFound,
		},
		{
			name:    "another directory id",
			state:   members,
			rec:     UpdateController{ID: 2, DirectoryID: TopicID{7}, Addr: "10.0.0.2:9093"},
			wantErr: ErrControllerNotFound,
		},
		{
			name:    "no membership and no seed",
			rec:     UpdateController{ID: 1, Addr: "10.0.0.1:9093"},
			wantErr: ErrControllerNotFound,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := State{Controllers: tc.state}
			next, err := Apply(s, tc.rec)
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) || !errors.Is(err, ErrRejected) {
					t.Fatalf("err %v, want %v", err, tc.wantErr)
				}
				if !reflect.DeepEqual(next.Controllers, tc.state) {
					t.Fatalf("a rejected record changed the state: %+v", next.Controllers)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(next.Controllers, tc.want) {
				t.Fatalf("controllers\n got %+v\nwant %+v", next.Controllers, tc.want)
			}
			if tc.state != nil && !reflect.DeepEqual(s.Controllers, members) {
				t.Fatalf("the old state changed: %+v", s.Controllers)
			}
		})
	}
}

func TestUpdateControllerValidate(t *testing.T) {
	for _, r := range []UpdateController{
		{ID: -1, Addr: "h:1"},
		{ID: 1, Addr: "no-port"},
		{ID: 1, Addr: "h:1", Listeners: []ControllerListener{{Name: "", Addr: "h:1"}}},
		{ID: 1, Addr: "h:1", Listeners: []ControllerListener{{Name: "A", Addr: "h"}}},
		{ID: 1, Addr: "h:1", Listeners: []ControllerListener{{Name: "A", Addr: "h:1"}, {Name: "A", Addr: "h:2"}}},
		{ID: 1, Addr: "h:1", KRaftMin: 2, KRaftMax: 1},
		{ID: 1, Addr: "h:1", Voters: []int32{2, 1}},
	} {
		if err := r.Validate(); !errors.Is(err, ErrInvalid) {
			t.Errorf("%+v: %v, want ErrInvalid", r, err)
		}
	}
}
