package connect

import (
	"sort"
	"strconv"
)

// unit is one thing a worker runs: a connector instance (Task = -1) or one
// of its tasks.
type unit struct {
	Connector string `json:"connector"`
	Task      int    `json:"task"`
}

func (u unit) isConnector() bool { return u.Task < 0 }

func (u unit) String() string {
	if u.isConnector() {
		return u.Connector
	}
	return u.Connector + "-" + strconv.Itoa(u.Task)
}

func unitLess(a, b unit) bool {
	if a.Connector != b.Connector {
		return a.Connector < b.Connector
	}
	return a.Task < b.Task
}

// clusterUnits lists every unit the config topic defines, in order.
func clusterUnits(st *clusterState) []unit {
	var out []unit
	for _, name := range st.connectorNames() {
		out = append(out, unit{name, -1})
		for i := range st.tasks[name] {
			out = append(out, unit{name, i})
		}
	}
	return out
}

// assignUnits spreads units over members (sorted member ids). It is
// sticky: a unit stays with the member that ran it (previous) as long as
// that member is below its fair share, so a rebalance moves only what it
// must; the rest go to the least loaded members. Pure and deterministic.
func assignUnits(members []string, previous map[string][]unit, units []unit) map[string][]unit {
	out := make(map[string][]unit, len(members))
	if len(members) == 0 {
		return out
	}
	sorted := append([]string(nil), members...)
	sort.Strings(sorted)
	for _, m := range sorted {
		out[m] = nil
	}
	exists := make(map[unit]bool, len(units))
	for _, u := range units {
		exists[u] = true
	}
	// Fair share: the first len(units)%len(members) members may take one more.
	base, extra := len(units)/len(sorted), len(units)%len(sorted)
	capacity := func(n int) int {
		if extra > 0 {
			return base + 1
		}
		return base
	}
	taken := map[unit]bool{}
	fullExtra := 0
	for _, m := range sorted {
		prev := append([]unit(nil), previous[m]...)
		sort.Slice(prev, func(i, j int) bool { return unitLess(prev[i], prev[j]) })
		for _, u := range prev {
			if !exists[u] || taken[u] {
				continue
			}
			limit := capacity(len(out[m]))
			if fullExtra >= extra {
				limit = base
			}
			if len(out[m]) >= limit {
				break
			}
			out[m] = append(out[m], u)
			taken[u] = true
		}
		if extra > 0 && len(out[m]) == base+1 {
			fullExtra++
		}
	}
	for _, u := range units {
		if taken[u] {
			continue
		}
		best := ""
		for _, m := range sorted {
			if best == "" || len(out[m]) < len(out[best]) {
				best = m
			}
		}
		out[best] = append(out[best], u)
		taken[u] = true
	}
	for _, m := range sorted {
		sort.Slice(out[m], func(i, j int) bool { return unitLess(out[m][i], out[m][j]) })
	}
	return out
}
