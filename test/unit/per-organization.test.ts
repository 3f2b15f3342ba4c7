import { describe, expect, it } from 'vitest';
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
