import { describe, expect, it } from 'vitest';
import { connectionLimitsFor, outgoingSocketsFor } from '../../server/http/connections';

describe('the descriptor budget', () => {
  it('takes the sockets the process opens itself out of the connections it accepts', () => {
    const alone = connectionLimitsFor({ maxWaitingRequests: 10_000, outgoingSockets: 0 }, 1_024);
    const delivering = connectionLimitsFor({ maxWaitingRequests: 10_000, outgoingSockets: 32 }, 1_024);
    expect(delivering.maxConnections + delivering.burstReserve).toBe(alone.maxConnections + alone.burstReserve - 32);
  });

  it('holds the connections and a burst of them past the cap within the open-file limit, with descriptors to spare for files', () => {
    for (const fileLimit of [256, 1_024, 65_536]) {
      const limits = connectionLimitsFor({ maxWaitingRequests: 10_000, outgoingSockets: 32 }, fileLimit);
      expect(limits.burstReserve).toBeGreaterThan(0);
      expect(limits.maxConnections + limits.burstReserve + 32).toBeLessThanOrEqual(fileLimit - 64);
    }
  });

  it('grants webhook deliveries what is asked under a large open-file limit, and no more than a quarter of the sockets a small one leaves', () => {
    expect(outgoingSocketsFor(32, 20_000)).toBe(32);
    expect(outgoingSocketsFor(1_000, 256)).toBe(48);
    expect(outgoingSocketsFor(1_000, null)).toBe(1_000);
  });
});
