# completions: bash and zsh, driven by `memprof --list-cmds` and `memprof CMD --list-opts`.
dist_bashcomp_DATA = %reldir%/memprof
AM_DISTCHECK_CONFIGURE_FLAGS = --with-bashcompdir='$${dc_install_base}/share/bash-completion/completions'
zshcompdir = $(datadir)/zsh/site-functions
dist_zshcomp_DATA = %reldir%/_memprof
