package check

import rego.v1

# CIS Red Hat Enterprise Linux 9 Benchmark 5.1.4: Ensure sshd Ciphers are configured. input: {host: Ciphers as /etc/ssh/sshd_config sets it}.

default result := false

weak := {"3des-cbc", "aes128-cbc", "aes192-cbc", "aes256-cbc", "blowfish-cbc", "cast128-cbc", "arcfour", "arcfour128", "arcfour256", "rijndael-cbc@lysator.liu.se"}

has_weak(v) if {
    some c in split(v, ",")
    c in weak
}

ok(v) if {
    is_string(v)
    v != ""
    not has_weak(v)
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
