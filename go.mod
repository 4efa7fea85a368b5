module github.com/fgcheck/fgcheck

go 1.26
