package loader

import (
	"bytes"
	"path/filepath"
)

// ReadPartitionMetadataIn reads the partition.metadata of a partition
// directory alone, without its segments: the topic id a share group's
// state names its topic by (KIP-932 keys __share_group_state by topic
// id). nil, nil when the directory has none.
func ReadPartitionMetadataIn(dir string) (*PartitionMetadata, error) {
	data, err := readFileIfExists(filepath.Join(dir, PartitionMetadataFile))
	if err != nil || data == nil {
		return nil, err
	}
	return ReadPartitionMetadata(bytes.NewReader(data), PartitionMetadataFile)
}
