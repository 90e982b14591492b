package check

import rego.v1

# CIS 5.1.5: the default ServiceAccount mounts no token and is bound to no role.

default result := false

violations contains "default ServiceAccount mounts its token" if {
	not input.default_service_account.automountServiceAccountToken == false
}

violations contains binding.name if {
	some binding in input.rolebindings
	some subject in binding.subjects
	subject.kind == "ServiceAccount"
	subject.name == "default"
	object.get(subject, "namespace", input.namespace) == input.namespace
}

result if {
	is_object(input.default_service_account)
	is_array(input.rolebindings)
	count(violations) == 0
}
