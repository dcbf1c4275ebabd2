# shellcheck shell=bash disable=SC2016,SC1003 # the quoted values are literal: nothing in them is meant to expand
# Load the job's environment into this shell: source '/tmp/my repro'/env.sh
# Written by `debugflow-step stage`; run_reproducer.sh and run_sanitizer.sh set the same.

# The job's environment as the workflow's stage step saw it: the spec's env, the variables its
# steps exported and their PATH. A variable already set in this shell keeps its value.
[[ -v QUADRANTS_CMAKE_ARGS ]] || export QUADRANTS_CMAKE_ARGS='-DQD_WITH_VULKAN:BOOL=OFF -DQD_WITH_CUDA:BOOL=ON'
[[ -v TRICKY ]] || export TRICKY='"""+__import__("os").system("touch PWNED")+""" `touch PWNED` $(touch PWNED) | '\'''\'''\'' \'
[[ -v EMPTY ]] || export EMPTY=''
export PATH='/opt/llvm 22/bin:/usr/bin'${PATH:+:$PATH}
