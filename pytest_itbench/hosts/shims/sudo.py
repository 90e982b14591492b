# Installed as /usr/bin/sudo on a simulated host, so playbooks written with `become: true` run unchanged.
# Commands already run as root there; `-u USER` switches to that user with setpriv. No password is asked.
"""The subset of sudo that ansible's become uses: sudo [-H] [-S] [-n] [-E] [-p PROMPT] [-u USER] CMD..."""

import os
import pwd
import sys


def main(argv):
    user = "root"
    args = list(argv)
    while args and args[0].startswith("-"):
        flag = args.pop(0)
        if flag == "--":
            break
        if flag in ("-u", "-p", "-g"):
            value = args.pop(0) if args else ""
            if flag == "-u":
                user = value
        elif flag.startswith("-u") and len(flag) > 2:
            user = flag[2:]
    if not args:
        sys.stderr.write("usage: sudo [-u user] command\n")
        return 1
    if user in ("root", "0", "#0"):
        os.execvp(args[0], args)
    try:
        entry = pwd.getpwnam(user[1:]) if user.startswith("#") else pwd.getpwnam(user)
    except KeyError:
        sys.stderr.write(f"sudo: unknown user {user}\n")
        return 1
    os.execvp("setpriv", ["setpriv", f"--reuid={entry.pw_uid}", f"--regid={entry.pw_gid}", "--init-groups", "--"] + args)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
