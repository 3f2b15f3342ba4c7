import { describe, expect, it } from 'vitest';
import { KeptLoads } from '../../server/domain/shared/kept-loads';
import { PerOrganization } from '../../server/domain/shared/per-organization';

/** A loader whose loads finish when the test says, each giving what the organization's configuration is at that moment. */
function loader() {
  let configuration = 'first';
  const loads: Array<() => void> = [];
  const load = (organizationId: number): Promise<string> =>
    new Promise((resolve) => {
      const seen = configuration;
      loads.push(() => resolve(`${organizationId}: ${seen}`));
    });
  return {
    load,
    loads,
    change: (next: string) => void (configuration = next),
  };
}

describe('what a process keeps of each organization', () => {
  it('loads once for creates that arrive together, and again only after a change', async () => {
    const source = loader();
    const kept = new PerOrganization(source.load);
    const together = [kept.get(1), kept.get(1)];
    expect(source.loads).toHaveLength(1);
    source.loads[0]();
    expect(await Promise.all(together)).toEqual(['1: first', '1: first']);
    expect(await kept.get(1)).toBe('1: first');

    source.change('second');
    kept.forget(1);
    const next = kept.get(1);
    source.loads[1]();
    expect(await next).toBe('1: second');
  });

  it('never keeps a load that was under way when its organization changed', async () => {
    const source = loader();
    const kept = new PerOrganization(source.load);
    const racing = kept.get(1);
    source.change('second');
    kept.forget(1);
    source.loads[0]();
    expect(await racing).toBe('1: first');

    const after = kept.get(1);
    expect(source.loads).toHaveLength(2);
    source.loads[1]();
    expect(await after).toBe('1: second');
  });

  it('keeps nothing while it may not hear of changes, and keeps again once it does', async () => {
    const source = loader();
    const kept = new PerOrganization(source.load);
    kept.forgetAll(false);
    const [a, b] = [kept.get(1), kept.get(1)];
    expect(source.loads).toHaveLength(2);
    kept.forgetAll(true);
    const c = kept.get(1);
    const d = kept.get(1);
    expect(source.loads).toHaveLength(3);
    for (const finish of source.loads) finish();
    expect(await Promise.all([a, b, c, d])).toEqual(['1: first', '1: first', '1: first', '1: first']);
  });

  it('loads again after a load that failed', async () => {
    let calls = 0;
    const kept = new PerOrganization(async () => {
      calls += 1;
      if (calls === 1) throw new Error('the database went away');
      return 'loaded';
    });
    await expect(kept.get(1)).rejects.toThrow('the database went away');
    expect(await kept.get(1)).toBe('loaded');
  });
});

describe('what a process keeps of other reads (the keys it knows)', () => {
  it('keeps no value it is told not to, and loads it again next time', async () => {
    let calls = 0;
    const kept = new KeptLoads(async (hash: string) => {
      calls += 1;
      return hash === 'known' ? { id: 7 } : null;
    }, { keeps: (value) => value !== null });
    expect(await kept.get('unknown')).toBeNull();
    expect(await kept.get('unknown')).toBeNull();
    expect(calls).toBe(2);
    expect(await kept.get('known')).toEqual({ id: 7 });
    expect(await kept.get('known')).toEqual({ id: 7 });
    expect(calls).toBe(3);
  });

  it('keeps at most its limit, letting go of the one kept longest', async () => {
    const loads: string[] = [];
    const kept = new KeptLoads(async (key: string) => {
      loads.push(key);
      return key.toUpperCase();
    }, { limit: 2 });
    for (const key of ['a', 'b', 'c', 'b', 'c', 'a']) await kept.get(key);
    expect(loads).toEqual(['a', 'b', 'c', 'a']);
  });

  it('forgets everything at once and goes on keeping', async () => {
    let calls = 0;
    const kept = new KeptLoads(async () => ++calls);
    expect(await kept.get('x')).toBe(1);
    kept.forgetAll();
    expect(await kept.get('x')).toBe(2);
    expect(await kept.get('x')).toBe(2);
  });
});
