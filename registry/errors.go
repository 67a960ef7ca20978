package registry

import (
	"errors"
	"fmt"
	"net/http"
)

// Confluent's error codes (io.confluent.kafka.schemaregistry.rest.exceptions.Errors):
// the first three digits are the HTTP status.
const (
	codeSubjectNotFound            = 40401
	codeVersionNotFound            = 40402
	codeSchemaNotFound             = 40403
	codeSubjectSoftDeleted         = 40404
	codeSubjectNotSoftDeleted      = 40405
	codeVersionSoftDeleted         = 40406
	codeVersionNotSoftDeleted      = 40407
	codeSubjectCompatNotConfigured = 40408
	codeSubjectModeNotConfigured   = 40409
	codeIncompatible               = 409
	codeInvalidSchema              = 42201
	codeInvalidVersion             = 42202
	codeInvalidCompatibility       = 42203
	codeInvalidMode                = 42204
	codeNotPermitted               = 42205
	codeReferenceExists            = 42206
	codeIDMismatch                 = 42207
	codeStore                      = 50001
	codeTimeout                    = 50002
	// 50003, error while forwarding: never, as nothing is forwarded.
)

// apiError is an error the REST API answers with Confluent's body
// {"error_code":…,"message":…}.
type apiError struct {
	Status  int    `json:"-"`
	Code    int    `json:"error_code"`
	Message string `json:"message"`
}

func (e *apiError) Error() string { return fmt.Sprintf("registry: %s (%d)", e.Message, e.Code) }

// apiErrorf builds an error whose HTTP status is the code's first three
// digits (or the code itself for the three-digit ones).
func apiErrorf(code int, format string, args ...any) *apiError {
	status := code
	for status >= 1000 {
		status /= 10
	}
	return &apiError{Status: status, Code: code, Message: fmt.Sprintf(format, args...)}
}

// httpError is the body of a refusal before any handler ran (unknown
// path, wrong method, media type), worded as Jersey words them.
func httpError(status int) *apiError {
	return &apiError{Status: status, Code: status, Message: fmt.Sprintf("HTTP %d %s", status, http.StatusText(status))}
}

func errSubjectNotFound(subject string) *apiError {
	return apiErrorf(codeSubjectNotFound, "Subject '%s' not found.", subject)
}

func errVersionNotFound(version int) *apiError {
	return apiErrorf(codeVersionNotFound, "Version %d not found.", version)
}

func errSchemaNotFound(id int) *apiError {
	return apiErrorf(codeSchemaNotFound, "Schema %d not found", id)
}

func errReadOnly(subject string) *apiError {
	if subject == "" {
		return apiErrorf(codeNotPermitted, "The registry is in read-only mode")
	}
	return apiErrorf(codeNotPermitted, "Subject %s is in read-only mode", subject)
}

// asAPIError turns any error into the one the REST API answers.
func asAPIError(err error) *apiError {
	var ae *apiError
	if errors.As(err, &ae) {
		return ae
	}
	return apiErrorf(codeStore, "Error in the backend data store: %v", err)
}
