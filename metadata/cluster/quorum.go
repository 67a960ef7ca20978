package cluster

import (
	"fmt"
	"slices"
)

// Controller is one member of the metadata quorum as the log knows it
// (KIP-853's voter: node id, directory id, endpoint). Addr is its raft
// address as AddRaftVoter gave it; empty for a voter the quorum started
// with, whose address each node takes from its controller.quorum.voters.
// A Learner receives the log but does not vote yet.
//
// Listeners and the supported kraft.version range are what the voter
// last announced with UpdateRaftVoter (UpdateController); empty until
// then (DescribeQuorum then lists Addr as the CONTROLLER listener).
type Controller struct {
	ID          int32                `json:"id"`
	Addr        string               `json:"addr,omitempty"`
	DirectoryID TopicID              `json:"directory_id"`
	Learner     bool                 `json:"learner,omitempty"`
	Listeners   []ControllerListener `json:"listeners,omitempty"`
	KRaftMin    int16                `json:"kraft_min,omitempty"`
	KRaftMax    int16                `json:"kraft_max,omitempty"`
}

// ControllerListener is one named endpoint of a controller (KIP-853's
// voter endpoints), Addr as host:port.
type ControllerListener struct {
	Name string `json:"name"`
	Addr string `json:"addr"`
}

// SetControllers replaces the quorum's membership. It is never proposed:
// a controller derives it when it applies a raft conf change (the voters
// and learners raft's ConfState holds, with the addresses the change
// carried) and applies it at that entry's index, so observers and
// snapshots carry the membership like any other state.
type SetControllers struct {
	Controllers []Controller `json:"controllers"`
}

// TypeSetControllers is SetControllers' type byte.
const TypeSetControllers RecordType = 22

// Type implements Record.
func (SetControllers) Type() RecordType { return TypeSetControllers }

// Validate implements Record: ids non-negative, ascending and unique,
// addresses host:port when given, at least one voter.
func (r SetControllers) Validate() error {
	voters := 0
	for i, c := range r.Controllers {
		if c.ID < 0 {
			return invalid("controller id %d", c.ID)
		}
		if i > 0 && r.Controllers[i-1].ID >= c.ID {
			return invalid("controllers not in ascending id order at %d", c.ID)
		}
		if c.Addr != "" {
			if err := ValidateHostPort(c.Addr); err != nil {
				return invalid("controller %d: %v", c.ID, err)
			}
		}
		if err := validateControllerListeners(c); err != nil {
			return err
		}
		if !c.Learner {
			voters++
		}
	}
	if voters == 0 {
		return invalid("no voter among the controllers")
	}
	return nil
}

func validateControllerListeners(c Controller) error {
	for i, l := range c.Listeners {
		if l.Name == "" || len(l.Name) > 255 {
			return invalid("controller %d: listener name %q", c.ID, l.Name)
		}
		if err := ValidateHostPort(l.Addr); err != nil {
			return invalid("controller %d: listener %s: %v", c.ID, l.Name, err)
		}
		for _, o := range c.Listeners[:i] {
			if o.Name == l.Name {
				return invalid("controller %d: listener %s twice", c.ID, l.Name)
			}
		}
	}
	if c.KRaftMin < 0 || c.KRaftMax < c.KRaftMin {
		return invalid("controller %d: kraft.version range %d-%d", c.ID, c.KRaftMin, c.KRaftMax)
	}
	return nil
}

// UpdateController is KIP-853's UpdateRaftVoter: controller ID (with
// DirectoryID) announces its endpoints and supported kraft.version range.
// Addr, its raft address, is what the other members dial from then on.
// It is proposed by the raft leader after checking the voter exists;
// Apply checks again. Voters seeds the membership (the raft voters'
// ids, taken from --controllers) when the log does not hold one yet.
//
// Apply rejects an id that is not a member (ErrControllerNotFound) or
// whose recorded non-zero directory id differs; a zero recorded
// directory id (a bootstrap voter) takes the record's.
type UpdateController struct {
	ID          int32                `json:"id"`
	DirectoryID TopicID              `json:"directory_id"`
	Addr        string               `json:"addr"`
	Listeners   []ControllerListener `json:"listeners,omitempty"`
	KRaftMin    int16                `json:"kraft_min,omitempty"`
	KRaftMax    int16                `json:"kraft_max,omitempty"`
	Voters      []int32              `json:"voters,omitempty"`
}

// TypeUpdateController is UpdateController's type byte.
const TypeUpdateController RecordType = 24

// ErrControllerNotFound: an UpdateController for a node that is not a
// member of the quorum (or has another directory id).
var ErrControllerNotFound = fmt.Errorf("%w: not a member of the metadata quorum", ErrRejected)

// Type implements Record.
func (UpdateController) Type() RecordType { return TypeUpdateController }

// Validate implements Record.
func (r UpdateController) Validate() error {
	if r.ID < 0 {
		return invalid("controller id %d", r.ID)
	}
	if err := ValidateHostPort(r.Addr); err != nil {
		return invalid("controller %d: %v", r.ID, err)
	}
	if err := validateControllerListeners(Controller{ID: r.ID, Listeners: r.Listeners, KRaftMin: r.KRaftMin, KRaftMax: r.KRaftMax}); err != nil {
		return err
	}
	for i, id := range r.Voters {
		if id < 0 || (i > 0 && r.Voters[i-1] >= id) {
			return invalid("seed voters not ascending non-negative ids at %d", id)
		}
	}
	return nil
}

func applyUpdateController(s State, r UpdateController) (State, error) {
	members := s.Controllers
	if len(members) == 0 {
		for _, id := range r.Voters {
			members = append(members, Controller{ID: id})
		}
	}
	i := slices.IndexFunc(members, func(c Controller) bool { return c.ID == r.ID })
	if i < 0 {
		return s, fmt.Errorf("%w: node %d", ErrControllerNotFound, r.ID)
	}
	if d := members[i].DirectoryID; d != (TopicID{}) && d != r.DirectoryID {
		return s, fmt.Errorf("%w: node %d has another directory id", ErrControllerNotFound, r.ID)
	}
	next := slices.Clone(members)
	c := &next[i]
	c.Addr, c.DirectoryID = r.Addr, r.DirectoryID
	c.Listeners = slices.Clone(r.Listeners)
	c.KRaftMin, c.KRaftMax = r.KRaftMin, r.KRaftMax
	s.Controllers = next
	return s, nil
}

func applySetControllers(s State, r SetControllers) State {
	s.Controllers = slices.Clone(r.Controllers)
	return s
}

// ControllerByID returns the member id of the quorum's recorded
// membership.
func (s State) ControllerByID(id int32) (Controller, bool) {
	i := slices.IndexFunc(s.Controllers, func(c Controller) bool { return c.ID == id })
	if i < 0 {
		return Controller{}, false
	}
	return s.Controllers[i], true
}

func validateControllersState(s State) error {
	if len(s.Controllers) == 0 {
		return nil
	}
	if err := (SetControllers{Controllers: s.Controllers}).Validate(); err != nil {
		return fmt.Errorf("%w: state: %v", ErrMalformed, err)
	}
	return nil
}
