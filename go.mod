module github.com/vkjit/vkjit

go 1.26.0

require (
	codeberg.org/sbinet/npyio v0.14.0
	github.com/goki/vgpu v1.0.34
	github.com/goki/vulkan v1.0.8
	github.com/google/pprof v0.0.0-20261105003125-4bf881d7fb0b
	github.com/klauspost/cpuid/v2 v2.4.2
	github.com/stretchr/testify v1.12.1
	github.com/zeebo/xxh3 v1.1.0
)

require (
	github.com/nlpodyssey/gopickle v0.3.0 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	golang.org/x/sys v0.41.0 // indirect
	golang.org/x/text v0.34.0 // indirect
	gonum.org/v1/gonum v0.17.0 // indirect
)
