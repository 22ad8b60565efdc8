import Glibc

exit(ProtfsctlTool.run(Array(CommandLine.arguments.dropFirst())))
