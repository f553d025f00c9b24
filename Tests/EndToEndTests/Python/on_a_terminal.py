"""Runs a command on a pseudo-terminal, answers its first question, prints its exit code and output.

usage: on_a_terminal.py ANSWER PROGRAM [ARG...]

The program's standard input, output and error are the terminal; when it prints "[y/N]" the script
types ANSWER and a newline. Prints the exit code on the first line, then everything the program wrote.
"""
import os
import pty
import select
import sys


def main():
    answer, program, arguments = sys.argv[1].encode(), sys.argv[2], sys.argv[2:]
    pid, fd = pty.fork()
    if pid == 0:
        os.execv(program, arguments)
    output, answered = b"", False
    while True:
        ready, _, _ = select.select([fd], [], [], 20)
        if not ready:
            break
        try:
            data = os.read(fd, 4096)
        except OSError:  # the program closed the terminal
            break
        if not data:
            break
        output += data
        if not answered and b"[y/N]" in output:
            os.write(fd, answer + b"\n")
            answered = True
    _, status = os.waitpid(pid, 0)
    print(os.waitstatus_to_exitcode(status))
    sys.stdout.write(output.decode(errors="replace"))


if __name__ == "__main__":
    main()
