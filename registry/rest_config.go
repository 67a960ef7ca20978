package registry

import (
	"net/http"
	"strings"
)

type configResponse struct {
	CompatibilityLevel string `json:"compatibilityLevel"`
}

// configUpdate is PUT /config's body and answer.
type configUpdate struct {
	Compatibility string `json:"compatibility"`
}

// configDeleted is DELETE /config's answer: the level that was set,
// under both names Confluent's versions have used for it.
type configDeleted struct {
	CompatibilityLevel string `json:"compatibilityLevel"`
	Compatibility      string `json:"compatibility"`
}

type modeBody struct {
	Mode string `json:"mode"`
}

func (r *Registry) getGlobalConfig(http.ResponseWriter, *http.Request) (any, error) {
	var level string
	r.read(func(v *view) { level = v.level("", r.cfg.DefaultCompatibility) })
	return configResponse{level}, nil
}

// getSubjectConfig is the subject's own level; with defaultToGlobal=true
// the one that applies to it.
func (r *Registry) getSubjectConfig(_ http.ResponseWriter, req *http.Request) (any, error) {
	level := r.subjectSetting(req, func(s *subjectState) string { return s.config },
		func(v *view) string { return v.level("", r.cfg.DefaultCompatibility) })
	if level == "" {
		return nil, apiErrorf(codeSubjectCompatNotConfigured, "Subject '%s' does not have subject-level compatibility configured", req.PathValue("subject"))
	}
	return configResponse{level}, nil
}

// subjectSetting is {subject}'s own setting, or with defaultToGlobal=true
// the global one when it has none; "" if neither.
func (r *Registry) subjectSetting(req *http.Request, own func(*subjectState) string, global func(*view) string) string {
	setting := ""
	r.read(func(v *view) {
		if s := v.subjects[req.PathValue("subject")]; s != nil {
			setting = own(s)
		}
		if setting == "" && boolParam(req, "defaultToGlobal") {
			setting = global(v)
		}
	})
	return setting
}

// putConfig sets the global level (PUT /config) or a subject's.
func (r *Registry) putConfig(w http.ResponseWriter, req *http.Request) (any, error) {
	var body configUpdate
	if err := r.decodeBody(w, req, &body); err != nil {
		return nil, err
	}
	level := strings.ToUpper(body.Compatibility)
	if !validLevel(level) {
		return nil, apiErrorf(codeInvalidCompatibility, "Invalid compatibility level. Valid values are none, backward, forward, full, backward_transitive, forward_transitive, and full_transitive")
	}
	subject := req.PathValue("subject")
	return r.write(req.Context(), func(_ *view, _ stamp) (change, error) {
		rec, err := encodeRecord(scopeKey(keyConfig, subject), configValue{level})
		return change{records: []Record{rec}, result: configUpdate{level}}, err
	})
}

// deleteConfig removes the global level (back to the default) or a
// subject's (which then follows the global one).
func (r *Registry) deleteConfig(_ http.ResponseWriter, req *http.Request) (any, error) {
	subject := req.PathValue("subject")
	return r.write(req.Context(), func(v *view, _ stamp) (change, error) {
		old := v.config
		if subject != "" {
			if s := v.subjects[subject]; s != nil {
				old = s.config
			} else {
				old = ""
			}
			if old == "" {
				return change{}, apiErrorf(codeSubjectCompatNotConfigured, "Subject '%s' does not have subject-level compatibility configured", subject)
			}
		}
		if old == "" {
			return change{result: configDeleted{r.cfg.DefaultCompatibility, r.cfg.DefaultCompatibility}}, nil
		}
		rec, err := encodeRecord(scopeKey(keyConfig, subject), nil)
		return change{records: []Record{rec}, result: configDeleted{old, old}}, err
	})
}

func (r *Registry) getGlobalMode(http.ResponseWriter, *http.Request) (any, error) {
	var mode string
	r.read(func(v *view) { mode = v.effectiveMode("") })
	return modeBody{mode}, nil
}

func (r *Registry) getSubjectMode(_ http.ResponseWriter, req *http.Request) (any, error) {
	mode := r.subjectSetting(req, func(s *subjectState) string { return s.mode },
		func(v *view) string { return v.effectiveMode("") })
	if mode == "" {
		return nil, apiErrorf(codeSubjectModeNotConfigured, "Subject '%s' does not have subject-level mode configured", req.PathValue("subject"))
	}
	return modeBody{mode}, nil
}

// putMode sets the global mode or a subject's. IMPORT needs the registry
// (or the subject) empty, unless force=true.
func (r *Registry) putMode(w http.ResponseWriter, req *http.Request) (any, error) {
	var body modeBody
	if err := r.decodeBody(w, req, &body); err != nil {
		return nil, err
	}
	mode := strings.ToUpper(body.Mode)
	if !validMode(mode) {
		return nil, apiErrorf(codeInvalidMode, "Invalid mode. Valid values are READWRITE, READONLY, READONLY_OVERRIDE and IMPORT")
	}
	subject, force := req.PathValue("subject"), boolParam(req, "force")
	return r.write(req.Context(), func(v *view, _ stamp) (change, error) {
		if mode == modeImport && !force {
			if subject == "" && len(v.subjectNames(true, "")) > 0 {
				return change{}, apiErrorf(codeNotPermitted, "Cannot import since found existing subjects")
			}
			if subject != "" && len(v.versions(subject, true)) > 0 {
				return change{}, apiErrorf(codeNotPermitted, "Cannot import since found existing subjects")
			}
		}
		rec, err := encodeRecord(scopeKey(keyMode, subject), modeValue{mode})
		return change{records: []Record{rec}, result: modeBody{mode}}, err
	})
}

func (r *Registry) deleteMode(_ http.ResponseWriter, req *http.Request) (any, error) {
	subject := req.PathValue("subject")
	return r.write(req.Context(), func(v *view, _ stamp) (change, error) {
		s := v.subjects[subject]
		if s == nil || s.mode == "" {
			return change{}, apiErrorf(codeSubjectModeNotConfigured, "Subject '%s' does not have subject-level mode configured", subject)
		}
		rec, err := encodeRecord(scopeKey(keyMode, subject), nil)
		return change{records: []Record{rec}, result: modeBody{s.mode}}, err
	})
}

type compatibilityResponse struct {
	IsCompatible bool `json:"is_compatible"`
}

type verboseCompatibilityResponse struct {
	IsCompatible bool     `json:"is_compatible"`
	Messages     []string `json:"messages"`
}

// checkCompatibility is POST /compatibility/subjects/{s}/versions/{v}
// (against that version, in the level's direction) and …/versions
// (against the versions the level asks: the latest, or all for the
// transitive ones). With verbose=true the answer says why not.
func (r *Registry) checkCompatibility(w http.ResponseWriter, req *http.Request) (any, error) {
	var body registerRequest
	if err := r.decodeBody(w, req, &body); err != nil {
		return nil, err
	}
	subject := req.PathValue("subject")
	var arg *versionArg
	if s := req.PathValue("version"); s != "" {
		a, err := parseVersion(s)
		if err != nil {
			return nil, err
		}
		arg = &a
	}
	var msgs []string
	var err error
	r.read(func(v *view) {
		var against []int
		level := v.level(subject, r.cfg.DefaultCompatibility)
		if arg != nil {
			if len(v.versions(subject, false)) == 0 {
				err = errSubjectNotFound(subject)
				return
			}
			version := arg.resolve(v, subject, false)
			if version == 0 {
				err = errVersionArgNotFound(*arg)
				return
			}
			against = []int{version}
		} else {
			against = versionsToCheck(v, subject, level)
		}
		var cand candidate
		if cand, err = r.candidate(v, subject, body, boolParam(req, "normalize")); err != nil {
			return
		}
		msgs = r.compatibilityMessages(v, subject, level, cand, against)
	})
	if err != nil {
		return nil, err
	}
	if boolParam(req, "verbose") {
		if msgs == nil {
			msgs = []string{}
		}
		return verboseCompatibilityResponse{IsCompatible: len(msgs) == 0, Messages: msgs}, nil
	}
	return compatibilityResponse{IsCompatible: len(msgs) == 0}, nil
}
