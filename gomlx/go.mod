module github.com/vkjit/vkjit/gomlx

go 1.26.0

require (
	github.com/gomlx/gomlx v0.26.0
	github.com/klauspost/cpuid/v2 v2.4.2
	github.com/stretchr/testify v1.12.1
	github.com/vkjit/vkjit v0.0.0-00010101000000-000000000000
	github.com/x448/float16 v0.8.4
)

require (
	codeberg.org/sbinet/npyio v0.14.0 // indirect
	github.com/dustin/go-humanize v1.0.1 // indirect
	github.com/go-logr/logr v1.4.3 // indirect
	github.com/goki/vgpu v1.0.34 // indirect
	github.com/goki/vulkan v1.0.8 // indirect
	github.com/google/pprof v0.0.0-20261105003125-4bf881d7fb0b // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/nlpodyssey/gopickle v0.3.0 // indirect
	github.com/pkg/errors v0.9.1 // indirect
	github.com/zeebo/xxh3 v1.1.0 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	golang.org/x/exp v0.0.0-20250819193227-8b4c13bb791b // indirect
	golang.org/x/sys v0.41.0 // indirect
	golang.org/x/text v0.34.0 // indirect
	gonum.org/v1/gonum v0.17.0 // indirect
	k8s.io/klog/v2 v2.130.1 // indirect
)

replace github.com/vkjit/vkjit => ../
