package check

import rego.v1

# CIS 5.2.8: Minimize the admission of containers with the NET_RAW capability: every container must drop NET_RAW (or ALL) in securityContext.capabilities.drop, and none may add it.

default result := false

containers(spec) := array.concat(
	array.concat(object.get(spec, "containers", []), object.get(spec, "initContainers", [])),
	object.get(spec, "ephemeralContainers", []),
)

drops_net_raw(c) if {
	some cap in c.securityContext.capabilities.drop
	cap in {"NET_RAW", "ALL"}
}

violations contains pod.name if {
	some pod in input.pods
	some c in containers(pod.spec)
	not drops_net_raw(c)
}

violations contains pod.name if {
	some pod in input.pods
	some c in containers(pod.spec)
	"NET_RAW" in c.securityContext.capabilities.add
}

result if {
	is_array(input.pods)
	count(violations) == 0
}
