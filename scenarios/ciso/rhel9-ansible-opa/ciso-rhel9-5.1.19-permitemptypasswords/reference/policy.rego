package check

import rego.v1

# CIS Red Hat Enterprise Linux 9 Benchmark 5.1.19: Ensure sshd PermitEmptyPasswords is disabled. input: {host: PermitEmptyPasswords as /etc/ssh/sshd_config sets it}.

default result := false

ok(v) if {
    is_string(v)
    v == "no"
}

violations contains host if {
    some host, v in input
    not ok(v)
}

result if {
    is_object(input)
    count(input) > 0
    count(violations) == 0
}
