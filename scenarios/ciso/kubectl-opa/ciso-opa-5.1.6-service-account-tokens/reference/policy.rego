package check

import rego.v1

# CIS 5.1.6: a pod mounts a token unless it opts out, or leaves it to a ServiceAccount that opts out.

default result := false

account_opts_out(name) if {
	some account in input.serviceaccounts
	account.name == name
	account.automountServiceAccountToken == false
}

no_token(pod) if pod.automountServiceAccountToken == false

no_token(pod) if {
	not is_boolean(pod.automountServiceAccountToken)
	account_opts_out(pod.serviceAccountName)
}

violations contains pod.name if {
	some pod in input.pods
	not no_token(pod)
}

result if {
	is_array(input.pods)
	count(violations) == 0
}
