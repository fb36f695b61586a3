"""Pure readers of the file formats: safetensors headers, the shard index, d2t/t2d contents."""
