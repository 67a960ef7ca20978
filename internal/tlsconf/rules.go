package tlsconf

import (
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// DistinguishedName is the certificate subject in RFC 2253 form, most
// specific attribute first ("CN=alice,OU=eng,O=Example"), as Kafka's
// X500Principal.getName() gives it to ssl.principal.mapping.rules.
func DistinguishedName(cert *x509.Certificate) string {
	var rdn pkix.RDNSequence
	if _, err := asn1.Unmarshal(cert.RawSubject, &rdn); err != nil {
		return cert.Subject.String()
	}
	return rdn.String()
}

// Rules is a parsed ssl.principal.mapping.rules (KIP-371): a list of
// RULE:pattern/replacement/[LU] entries and DEFAULT, tried in order.
type Rules struct{ rules []rule }

type rule struct {
	isDefault   bool
	pattern     *regexp.Regexp
	replacement string
	toLower     bool
	toUpper     bool
}

// ErrNoRuleMatched means no mapping rule applied to a certificate's
// subject (and the list has no DEFAULT): the client is not authenticated.
var ErrNoRuleMatched = errors.New("tls: no ssl.principal.mapping.rules entry matches the certificate subject")

// ParseRules parses the property; empty means DEFAULT.
func ParseRules(v string) (*Rules, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return &Rules{rules: []rule{{isDefault: true}}}, nil
	}
	var out []rule
	for rest := v; rest != ""; {
		rest = strings.TrimLeft(rest, " \t\n,")
		if rest == "" {
			break
		}
		switch {
		case strings.HasPrefix(rest, "DEFAULT"):
			out = append(out, rule{isDefault: true})
			rest = rest[len("DEFAULT"):]
		case strings.HasPrefix(rest, "RULE:"):
			rest = rest[len("RULE:"):]
			pat, after, ok := cutUnescaped(rest)
			if !ok {
				return nil, fmt.Errorf("tls: %s: rule %q lacks its replacement", PrincipalMappingRules, rest)
			}
			repl, after, ok := cutUnescaped(after)
			if !ok {
				return nil, fmt.Errorf("tls: %s: rule %q is not closed with /", PrincipalMappingRules, rest)
			}
			re, err := regexp.Compile("^(?:" + strings.ReplaceAll(pat, `\/`, "/") + ")$")
			if err != nil {
				return nil, fmt.Errorf("tls: %s: %w", PrincipalMappingRules, err)
			}
			r := rule{pattern: re, replacement: javaReplacement(strings.ReplaceAll(repl, `\/`, "/"))}
			switch {
			case strings.HasPrefix(after, "L"):
				r.toLower, after = true, after[1:]
			case strings.HasPrefix(after, "U"):
				r.toUpper, after = true, after[1:]
			}
			out = append(out, r)
			rest = after
		default:
			return nil, fmt.Errorf("tls: %s: %q is neither DEFAULT nor RULE:pattern/replacement/[LU]", PrincipalMappingRules, rest)
		}
		rest = strings.TrimLeft(rest, " \t\n")
		if rest != "" && rest[0] != ',' {
			return nil, fmt.Errorf("tls: %s: unexpected %q after a rule", PrincipalMappingRules, rest)
		}
	}
	return &Rules{rules: out}, nil
}

// cutUnescaped splits s at its first '/' not preceded by a backslash.
func cutUnescaped(s string) (before, after string, ok bool) {
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' {
			i++
			continue
		}
		if s[i] == '/' {
			return s[:i], s[i+1:], true
		}
	}
	return s, "", false
}

// javaReplacement turns Java's $1 group references into Go's ${1}.
var javaGroupRef = regexp.MustCompile(`\$(\d+)`)

func javaReplacement(r string) string { return javaGroupRef.ReplaceAllString(r, "$${$1}") }

// Apply maps a distinguished name to a principal name.
func (r *Rules) Apply(dn string) (string, error) {
	for _, ru := range r.rules {
		if ru.isDefault {
			return dn, nil
		}
		if !ru.pattern.MatchString(dn) {
			continue
		}
		name := ru.pattern.ReplaceAllString(dn, ru.replacement)
		switch {
		case ru.toLower:
			name = strings.ToLower(name)
		case ru.toUpper:
			name = strings.ToUpper(name)
		}
		return name, nil
	}
	return "", ErrNoRuleMatched
}
