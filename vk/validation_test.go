package vk

import (
	"strings"
	"testing"

	vk "github.com/goki/vulkan"
	"github.com/stretchr/testify/require"
)

// TestValidationCanFail proves that the validation check every test
// relies on can fail: a deliberately invalid call (a buffer with no
// usage flags, which VUID-VkBufferCreateInfo-usage-requiredbitmask
// forbids), made here and only here, must come back from
// ValidationMessages, the list that the test harnesses and `vkjit run
// --validate` fail on.
func TestValidationCanFail(t *testing.T) {
	inst, err := NewInstance(true)
	require.NoError(t, err)
	defer inst.Destroy()
	devs, err := inst.Devices()
	require.NoError(t, err)
	idx, err := ChooseDevice(devs, "")
	require.NoError(t, err)
	d, err := inst.OpenDevice(idx, DeviceOptions{})
	require.NoError(t, err)
	defer d.Destroy()
	ValidationMessages() // whatever came before
	bci := &vk.BufferCreateInfo{SType: vk.StructureTypeBufferCreateInfo, Size: 64, SharingMode: vk.SharingModeExclusive}
	var buf vk.Buffer
	if vk.CreateBuffer(d.dev, bci, nil, &buf) == vk.Success {
		vk.DestroyBuffer(d.dev, buf, nil)
	}
	msgs := ValidationMessages()
	require.NotEmpty(t, msgs, "the validation layer reported nothing for an invalid call")
	require.Contains(t, strings.Join(msgs, "\n"), "VUID-VkBufferCreateInfo-usage")
	require.Empty(t, ValidationMessages(), "reading the messages clears them")
}
