package auth

import (
	"bufio"
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"os"
	"strings"
)

// PlainLoginModule is the JAAS login module of Kafka's SASL/PLAIN.
const PlainLoginModule = "org.apache.kafka.common.security.plain.PlainLoginModule"

// ErrInvalidJAAS is wrapped by PlainUsers' errors. They name positions and
// option keys, never values.
var ErrInvalidJAAS = errors.New("auth: invalid JAAS configuration")

// PlainUsers parses the sasl.jaas.config line Kafka brokers use for PLAIN,
//
//	org.apache.kafka.common.security.plain.PlainLoginModule required
//	    username="admin" password="admin-secret"
//	    user_admin="admin-secret" user_alice="alice-secret";
//
// and returns its user_<name> options as name -> password. The other
// options (username, password: the broker's own client credentials) are
// ignored. Values are double- or single-quoted (with backslash escapes) or
// bare words; the line is one login module and ends with ';'.
func PlainUsers(jaas string) (map[string]string, error) {
	module, options, err := parseJAAS(jaas)
	if err != nil {
		return nil, err
	}
	if module != PlainLoginModule {
		return nil, fmt.Errorf("%w: login module %q is not %s", ErrInvalidJAAS, module, PlainLoginModule)
	}
	users := make(map[string]string)
	for key, value := range options {
		name, ok := strings.CutPrefix(key, "user_")
		if !ok {
			continue
		}
		if name == "" {
			return nil, fmt.Errorf("%w: option %q names no user", ErrInvalidJAAS, key)
		}
		users[name] = value
	}
	return users, nil
}

// jaasFlags are the JAAS control flags.
var jaasFlags = map[string]bool{"required": true, "requisite": true, "sufficient": true, "optional": true}

// parseJAAS parses one JAAS login module entry:
//
//	module-class flag { key "=" value } ";"
func parseJAAS(s string) (module string, options map[string]string, err error) {
	lx := jaasLexer{src: s}
	tok, err := lx.next()
	if err != nil {
		return "", nil, err
	}
	if tok.kind != jaasWord {
		return "", nil, lx.errorf(tok, "expected a login module class")
	}
	module = tok.text
	tok, err = lx.next()
	if err != nil {
		return "", nil, err
	}
	if tok.kind != jaasWord || !jaasFlags[strings.ToLower(tok.text)] {
		return "", nil, lx.errorf(tok, "expected a control flag (required, requisite, sufficient, optional) after the login module")
	}
	options = make(map[string]string)
	for {
		tok, err = lx.next()
		if err != nil {
			return "", nil, err
		}
		if tok.kind == jaasSemicolon {
			break
		}
		if tok.kind != jaasWord {
			return "", nil, lx.errorf(tok, "expected an option name or ';'")
		}
		key := tok.text
		if tok, err = lx.next(); err != nil {
			return "", nil, err
		}
		if tok.kind != jaasEquals {
			return "", nil, lx.errorf(tok, "expected '=' after option %q", key)
		}
		if tok, err = lx.next(); err != nil {
			return "", nil, err
		}
		if tok.kind != jaasWord && tok.kind != jaasQuoted {
			return "", nil, lx.errorf(tok, "expected a value for option %q", key)
		}
		if _, dup := options[key]; dup {
			return "", nil, lx.errorf(tok, "option %q given twice", key)
		}
		options[key] = tok.text
	}
	if tok, err = lx.next(); err != nil {
		return "", nil, err
	}
	if tok.kind != jaasEOF {
		return "", nil, lx.errorf(tok, "unexpected text after ';' (one login module only)")
	}
	return module, options, nil
}

type jaasTokenKind int

const (
	jaasEOF jaasTokenKind = iota
	jaasWord
	jaasQuoted
	jaasEquals
	jaasSemicolon
)

type jaasToken struct {
	kind jaasTokenKind
	text string
	pos  int // byte offset of the token's start
}

type jaasLexer struct {
	src string
	pos int
}

func (lx *jaasLexer) errorf(tok jaasToken, format string, args ...any) error {
	if tok.kind == jaasEOF {
		return fmt.Errorf("%w: at end of input: %s", ErrInvalidJAAS, fmt.Sprintf(format, args...))
	}
	return fmt.Errorf("%w: at offset %d: %s", ErrInvalidJAAS, tok.pos, fmt.Sprintf(format, args...))
}

func isJAASSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func (lx *jaasLexer) next() (jaasToken, error) {
	for lx.pos < len(lx.src) && isJAASSpace(lx.src[lx.pos]) {
		lx.pos++
	}
	start := lx.pos
	if start == len(lx.src) {
		return jaasToken{kind: jaasEOF, pos: start}, nil
	}
	switch c := lx.src[start]; c {
	case '=':
		lx.pos++
		return jaasToken{kind: jaasEquals, pos: start}, nil
	case ';':
		lx.pos++
		return jaasToken{kind: jaasSemicolon, pos: start}, nil
	case '"', '\'':
		return lx.quoted(c)
	}
	for lx.pos < len(lx.src) {
		c := lx.src[lx.pos]
		if isJAASSpace(c) || c == '=' || c == ';' || c == '"' || c == '\'' {
			break
		}
		lx.pos++
	}
	return jaasToken{kind: jaasWord, text: lx.src[start:lx.pos], pos: start}, nil
}

// quoted reads a string quoted with quote, starting at lx.pos. A backslash
// escapes the next character (\n, \r, \t are the control characters).
func (lx *jaasLexer) quoted(quote byte) (jaasToken, error) {
	start := lx.pos
	lx.pos++
	var b strings.Builder
	for lx.pos < len(lx.src) {
		c := lx.src[lx.pos]
		lx.pos++
		switch c {
		case quote:
			return jaasToken{kind: jaasQuoted, text: b.String(), pos: start}, nil
		case '\\':
			if lx.pos == len(lx.src) {
				return jaasToken{}, fmt.Errorf("%w: at offset %d: quoted string ends in a backslash", ErrInvalidJAAS, start)
			}
			e := lx.src[lx.pos]
			lx.pos++
			switch e {
			case 'n':
				b.WriteByte('\n')
			case 'r':
				b.WriteByte('\r')
			case 't':
				b.WriteByte('\t')
			default:
				b.WriteByte(e)
			}
		default:
			b.WriteByte(c)
		}
	}
	return jaasToken{}, fmt.Errorf("%w: at offset %d: unterminated quoted string", ErrInvalidJAAS, start)
}

// ErrInvalidUsersFile is wrapped by PlainUsersFromFile's errors. They name
// line numbers, never passwords.
var ErrInvalidUsersFile = errors.New("auth: invalid users file")

// PlainUsersFromFile reads a PLAIN user table from a file of lines
//
//	name=password
//
// The name is trimmed of surrounding blanks; the password is everything
// after the first '=' up to the end of the line (a trailing '\r' dropped),
// so it may contain '=', '#' and blanks. Blank lines and lines whose first
// non-blank character is '#' are ignored. A line without '=', an empty name
// or password, or a name given twice is an error.
func PlainUsersFromFile(path string) (map[string]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("auth: reading users file: %w", err)
	}
	users := make(map[string]string)
	scanner := bufio.NewScanner(bytes.NewReader(data))
	scanner.Buffer(make([]byte, 0, 4096), len(data)+1)
	for lineNo := 1; scanner.Scan(); lineNo++ {
		line := strings.TrimSuffix(scanner.Text(), "\r")
		trimmed := strings.TrimSpace(line)
		if trimmed == "" || strings.HasPrefix(trimmed, "#") {
			continue
		}
		name, password, ok := strings.Cut(line, "=")
		if !ok {
			return nil, fmt.Errorf("%w: %s line %d: expected name=password", ErrInvalidUsersFile, path, lineNo)
		}
		name = strings.TrimSpace(name)
		if name == "" {
			return nil, fmt.Errorf("%w: %s line %d: empty user name", ErrInvalidUsersFile, path, lineNo)
		}
		if password == "" {
			return nil, fmt.Errorf("%w: %s line %d: empty password for user %q", ErrInvalidUsersFile, path, lineNo, name)
		}
		if _, dup := users[name]; dup {
			return nil, fmt.Errorf("%w: %s line %d: user %q given twice", ErrInvalidUsersFile, path, lineNo, name)
		}
		users[name] = password
	}
	if err := scanner.Err(); err != nil {
		return nil, fmt.Errorf("auth: reading users file %s: %w", path, err)
	}
	return users, nil
}

// PlainChecker returns a NewPlain check over users (copied: later changes
// to the map are not seen). It compares keyed digests of the passwords in
// constant time, and for an unknown user compares against a dummy digest,
// so neither the password's length nor the user's existence shows in the
// time a check takes.
func PlainChecker(users map[string]string) func(user, password string) bool {
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		panic("auth: crypto/rand failed: " + err.Error())
	}
	digest := func(password string) []byte {
		mac := hmac.New(sha256.New, key)
		mac.Write([]byte(password))
		return mac.Sum(nil)
	}
	digests := make(map[string][]byte, len(users))
	for user, password := range users {
		digests[user] = digest(password)
	}
	dummy := digest(rand.Text())
	return func(user, password string) bool {
		want, known := digests[user]
		if !known {
			want = dummy
		}
		match := subtle.ConstantTimeCompare(digest(password), want) == 1
		return match && known
	}
}
