package check

import rego.v1

# CIS 5.1.1: cluster-admin is bound to the group system:masters only.

default result := false

masters(subject) if {
	subject.kind == "Group"
	subject.name == "system:masters"
}

violations contains binding.name if {
	some binding in input.bindings
	binding.role.kind == "ClusterRole"
	binding.role.name == "cluster-admin"
	some subject in binding.subjects
	not masters(subject)
}

result if {
	count(input.bindings) > 0
	count(violations) == 0
}
