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
type Controller struct {
	ID          int32   `json:"id"`
	Addr        string  `json:"addr,omitempty"`
	DirectoryID TopicID `json:"directory_id"`
	Learner     bool    `json:"learner,omitempty"`
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
		if !c.Learner {
			voters++
		}
	}
	if voters == 0 {
		return invalid("no voter among the controllers")
	}
	return nil
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
