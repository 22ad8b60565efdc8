import Glibc

exit(ProtfsTool.run(Array(CommandLine.arguments.dropFirst())))
