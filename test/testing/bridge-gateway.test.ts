// A Docker engine started for the first time records no Gateway in its default bridge's IPAM config:
// the harness still finds the address containers reach the host at (CI machines can be new).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dockerBridgeGateway, recordedBridgeGateway, ensureTestImage, TEST_IMAGE } from '../../testing/index.ts';
import { startNetnsEngine, type NetnsEngine } from '../harness/netns-engine.ts';

let engine: NetnsEngine;

beforeAll(async () => {
  await ensureTestImage();
  // a bridge range of its own, so the answer cannot be this machine's docker0 by chance
  engine = await startNetnsEngine({ addressPool: 'base=10.213.0.0/16,size=24' });
  await engine.loadImage(TEST_IMAGE);
}, 180_000);

afterAll(async () => {
  await engine?.stop();
});

describe('the docker bridge gateway on a first-start engine', () => {
  it('is found although the engine records none, and is the address of its bridge interface', async () => {
    // the engine is new: the condition CI met on a brand-new machine
    expect(await recordedBridgeGateway({ env: engine.env })).toBeNull();
    const found = await dockerBridgeGateway({ env: engine.env });
    // the engine's own namespace says which address its bridge has (not this machine's docker0)
    const bridge = (await engine.inNetns(['ip', '-4', '-o', 'addr', 'show', 'dev', 'docker0'])).match(/inet (\d+\.\d+\.\d+\.\d+)\//)?.[1];
    expect(bridge).toBeDefined();
    expect(bridge).toBe('10.213.0.1');
    expect(found).toBe(bridge);
  }, 120_000);
});
