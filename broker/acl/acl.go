// Package acl gives Kafka's ACLs their meaning: which binding a filter
// matches (DescribeAcls, DeleteAcls) and whether a principal connecting
// from a host may perform an operation on a resource (the authorizer).
// Bindings are stored in the metadata quorum as cluster.ACLBinding with
// Kafka's wire values for every enum.
package acl

import (
	"fmt"
	"strings"

	"github.com/strata-streaming/strata/metadata/cluster"
)

// ResourceType is Kafka's ResourceType, with its wire values.
type ResourceType int8

// Resource types.
const (
	ResourceAny             ResourceType = 1
	ResourceTopic           ResourceType = 2
	ResourceGroup           ResourceType = 3
	ResourceCluster         ResourceType = 4
	ResourceTransactionalID ResourceType = 5
	ResourceDelegationToken ResourceType = 6
	ResourceUser            ResourceType = 7
)

// PatternType is Kafka's PatternType.
type PatternType int8

// Pattern types. ANY and MATCH occur only in filters.
const (
	PatternAny      PatternType = 1
	PatternMatch    PatternType = 2
	PatternLiteral  PatternType = 3
	PatternPrefixed PatternType = 4
)

// Operation is Kafka's AclOperation.
type Operation int8

// Operations.
const (
	OpAny             Operation = 1
	OpAll             Operation = 2
	OpRead            Operation = 3
	OpWrite           Operation = 4
	OpCreate          Operation = 5
	OpDelete          Operation = 6
	OpAlter           Operation = 7
	OpDescribe        Operation = 8
	OpClusterAction   Operation = 9
	OpDescribeConfigs Operation = 10
	OpAlterConfigs    Operation = 11
	OpIdempotentWrite Operation = 12
	OpCreateTokens    Operation = 13
	OpDescribeTokens  Operation = 14
)

// Permission is Kafka's AclPermissionType.
type Permission int8

// Permissions.
const (
	PermissionAny   Permission = 1
	PermissionDeny  Permission = 2
	PermissionAllow Permission = 3
)

// Wildcards: a LITERAL resource name "*" matches every resource of its
// type, principal "User:*" every user, host "*" every host.
const (
	WildcardResource  = "*"
	WildcardPrincipal = "User:*"
	WildcardHost      = "*"
)

// ClusterName is the one name of the CLUSTER resource.
const ClusterName = "kafka-cluster"

// Binding is one ACL.
type Binding = cluster.ACLBinding

// ValidateBinding reports why b cannot be created, as Kafka's CreateAcls
// does: concrete values only (no ANY or MATCH), a LITERAL or PREFIXED
// pattern, a non-empty resource name, a Type:Name principal and a host.
func ValidateBinding(b Binding) error {
	switch {
	case b.ResourceType < int8(ResourceTopic) || b.ResourceType > int8(ResourceUser):
		return fmt.Errorf("resource type %d cannot be used in an ACL", b.ResourceType)
	case b.PatternType != int8(PatternLiteral) && b.PatternType != int8(PatternPrefixed):
		return fmt.Errorf("pattern type %d cannot be used in an ACL (LITERAL or PREFIXED)", b.PatternType)
	case b.ResourceName == "":
		return fmt.Errorf("the resource name is empty")
	case b.ResourceType == int8(ResourceCluster) && b.ResourceName != ClusterName:
		return fmt.Errorf("the cluster resource is named %s, not %q", ClusterName, b.ResourceName)
	case b.Operation < int8(OpAll) || b.Operation > int8(OpDescribeTokens):
		return fmt.Errorf("operation %d cannot be used in an ACL", b.Operation)
	case b.Permission != int8(PermissionDeny) && b.Permission != int8(PermissionAllow):
		return fmt.Errorf("permission %d cannot be used in an ACL (ALLOW or DENY)", b.Permission)
	case b.Host == "":
		return fmt.Errorf("the host is empty (use * for every host)")
	}
	typ, name, ok := strings.Cut(b.Principal, ":")
	if !ok || typ == "" || name == "" {
		return fmt.Errorf("could not parse principal %q (Type:Name)", b.Principal)
	}
	return nil
}

// Filter selects bindings (DescribeAcls, DeleteAcls): nil strings and
// the ANY values match everything; pattern MATCH selects the bindings
// that would apply to the named resource (its literal, the wildcard and
// every prefix).
type Filter struct {
	ResourceType ResourceType
	ResourceName *string
	PatternType  PatternType
	Principal    *string
	Host         *string
	Operation    Operation
	Permission   Permission
}

// Validate reports a filter Kafka would refuse: values outside the enums.
func (f Filter) Validate() error {
	switch {
	case f.ResourceType < ResourceAny || f.ResourceType > ResourceUser:
		return fmt.Errorf("unknown resource type %d", f.ResourceType)
	case f.PatternType < PatternAny || f.PatternType > PatternPrefixed:
		return fmt.Errorf("unknown pattern type %d", f.PatternType)
	case f.Operation < OpAny || f.Operation > OpDescribeTokens:
		return fmt.Errorf("unknown operation %d", f.Operation)
	case f.Permission < PermissionAny || f.Permission > PermissionAllow:
		return fmt.Errorf("unknown permission %d", f.Permission)
	}
	return nil
}

// Matches reports whether the filter selects b.
func (f Filter) Matches(b Binding) bool {
	if f.ResourceType != ResourceAny && int8(f.ResourceType) != b.ResourceType {
		return false
	}
	if !f.matchesPattern(b) {
		return false
	}
	if f.Principal != nil && *f.Principal != b.Principal {
		return false
	}
	if f.Host != nil && *f.Host != b.Host {
		return false
	}
	if f.Operation != OpAny && int8(f.Operation) != b.Operation {
		return false
	}
	return f.Permission == PermissionAny || int8(f.Permission) == b.Permission
}

func (f Filter) matchesPattern(b Binding) bool {
	switch f.PatternType {
	case PatternAny:
		return f.ResourceName == nil || *f.ResourceName == b.ResourceName
	case PatternMatch:
		if f.ResourceName == nil {
			return true
		}
		name := *f.ResourceName
		if b.PatternType == int8(PatternPrefixed) {
			return strings.HasPrefix(name, b.ResourceName)
		}
		return b.ResourceName == name || b.ResourceName == WildcardResource
	default:
		return int8(f.PatternType) == b.PatternType && (f.ResourceName == nil || *f.ResourceName == b.ResourceName)
	}
}

// Select returns the bindings the filter matches, in bs's order.
func Select(bs []Binding, f Filter) []Binding {
	var out []Binding
	for _, b := range bs {
		if f.Matches(b) {
			out = append(out, b)
		}
	}
	return out
}
