module github.com/vkjit/vkjit

go 1.26.8

require (
	github.com/goki/vgpu v1.0.34
	github.com/goki/vulkan v1.0.8
	github.com/stretchr/testify v1.12.1
)

require go.yaml.in/yaml/v3 v3.0.5 // indirect
