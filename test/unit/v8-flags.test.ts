import v8 from 'node:v8';
import { expect, it, vi } from 'vitest';
import { tuneGcForCpus } from '../../src/v8-flags.ts';

it('turns parallel scavenging off on one CPU only, and never over the operator’s own flags', () => {
  const set = vi.spyOn(v8, 'setFlagsFromString').mockImplementation(() => {});
  try {
    expect(tuneGcForCpus(4, '')).toEqual([]);
    expect(tuneGcForCpus(1, '--parallel-scavenge')).toEqual([]);
    expect(tuneGcForCpus(1, '--max-old-space-size=512 --single-threaded-gc')).toEqual([]);
    expect(set).not.toHaveBeenCalled();
    expect(tuneGcForCpus(1, '--max-old-space-size=512')).toEqual(['--no-parallel-scavenge']);
    expect(set).toHaveBeenCalledWith('--no-parallel-scavenge');
  } finally {
    set.mockRestore();
  }
});
