// GraphQL aliases do not multiply the rate limit (issue 8, item 7): each top-level field of the
// operation costs one unit, so one request with 30 aliased mutations spends 30 units, and the
// RateLimit members say what the request cost (`gpufleet-cost`). A request the windows cannot take
// is 429 before anything runs, and is not counted.
import { parse } from 'graphql';
import { parseList } from 'structured-headers';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { operationCost } from '../../../api/graphql/limits.ts';
import type { TestControlPlane } from '../../harness/control-plane.ts';
import { startPodsControlPlane } from '../pods-helpers.ts';

const QUOTA = 100;

let cp: TestControlPlane;
beforeAll(async () => {
  cp = await startPodsControlPlane({ rateLimits: `minute=${QUOTA},hour=100000,day=100000` });
});
afterAll(async () => cp?.close());

interface Answer {
  status: number;
  minute: { r: number; t: number; cost: number | undefined };
  retryAfter: string | null;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any;
}

async function gql(key: string, query: string, operationName?: string): Promise<Answer> {
  const res = await fetch(`${cp.url}/graphql`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ query, ...(operationName ? { operationName } : {}) }),
  });
  const members = parseList(res.headers.get('ratelimit') ?? '');
  const minute = members.find(([name]) => String(name) === 'minute');
  expect(minute, 'a minute member in RateLimit').toBeDefined();
  const params = minute![1];
  const cost = params.get('gpufleet-cost');
  return {
    status: res.status,
    minute: { r: params.get('r') as number, t: params.get('t') as number, cost: cost === undefined ? undefined : (cost as number) },
    retryAfter: res.headers.get('retry-after'),
    body: await res.json(),
  };
}

const aliasedQueries = (n: number) => `{ ${Array.from({ length: n }, (_, i) => `q${i}: myself { id }`).join(' ')} }`;
const aliasedCreates = (n: number, tag: string) =>
  `mutation { ${Array.from({ length: n }, (_, i) => `m${i}: deployCpuPod(input: { name: "${tag}-${i}", imageName: "busybox:1.36", instanceId: "cpu3c-2-4" }) { id }`).join(' ')} }`;

describe('cost of a GraphQL request', () => {
  test('30 aliased queries and 30 aliased mutations cost 30 units each; a request that does not fit is 429 and runs nothing', { timeout: 90_000 }, async () => {
    const user = await cp.newAccount('read_write');
    const pods = () => cp.services.store.count('pods', { accountId: user.accountId });
    // start in a fresh minute window, so the counts below cannot be reset halfway
    let first = await gql(user.key, '{ myself { id } }');
    if (first.minute.t < 20) {
      await new Promise((r) => setTimeout(r, (first.minute.t + 1) * 1000));
      first = await gql(user.key, '{ myself { id } }');
    }
    expect(first.status).toBe(200);
    expect(first.minute).toMatchObject({ r: QUOTA - 1, cost: 1 });

    const q = await gql(user.key, aliasedQueries(30));
    expect(q.status).toBe(200);
    expect(Object.keys(q.body.data)).toHaveLength(30);
    expect(q.minute).toMatchObject({ r: QUOTA - 31, cost: 30 });

    const m = await gql(user.key, aliasedCreates(30, 'a'));
    expect(m.status).toBe(200);
    expect(m.body.errors, JSON.stringify(m.body.errors?.[0])).toBeUndefined();
    expect(await pods()).toBe(30);
    expect(m.minute).toMatchObject({ r: QUOTA - 61, cost: 30 });

    const m2 = await gql(user.key, aliasedCreates(30, 'b'));
    expect(m2.minute).toMatchObject({ r: QUOTA - 91, cost: 30 });
    expect(await pods()).toBe(60);

    // 9 units left: 30 aliased mutations do not fit
    const refused = await gql(user.key, aliasedCreates(30, 'c'));
    expect(refused.status).toBe(429);
    expect(refused.body.errors[0].extensions.code).toBe('RATE_LIMITED');
    expect(refused.body.errors[0].message).toMatch(/costs 30 units.*minute/);
    expect(refused.body.data).toBeUndefined();
    expect(refused.retryAfter).toMatch(/^\d+$/);
    expect(refused.minute).toMatchObject({ r: QUOTA - 91, cost: 30 });
    expect(await pods()).toBe(60);

    // the refused request was not counted: a one-field request still fits, and REST costs one unit
    const after = await gql(user.key, '{ myself { id } }');
    expect(after.status).toBe(200);
    expect(after.minute).toMatchObject({ r: QUOTA - 92, cost: 1 });
    const rest = await fetch(`${cp.url}/v2/pods`, { headers: { authorization: `Bearer ${user.key}` } });
    expect(rest.status).toBe(200);
    expect(rest.headers.get('ratelimit')).toMatch(/^"minute";r=7;t=\d+, /);
  });

  test('operationCost: one unit per top-level response key, through fragments, for the operation that runs', () => {
    const cost = (q: string, op?: string) => operationCost(parse(q), op);
    expect(cost('{ myself { id } }')).toBe(1);
    expect(cost('{ a: myself { id } b: myself { id } c: gpuTypes { id } }')).toBe(3);
    // the same response key twice is merged by the executor and runs once
    expect(cost('{ myself { id } myself { email } }')).toBe(1);
    expect(cost('query { ...F ... on Query { z: myself { id } } } fragment F on Query { x: myself { id } y: myself { id } }')).toBe(3);
    // nested fields cost nothing more: the depth limit bounds them
    expect(cost('{ myself { pods { id runtime { ports { ip } } } } }')).toBe(1);
    expect(cost('query A { a: myself { id } } query B { b1: myself { id } b2: myself { id } }', 'B')).toBe(2);
    expect(cost('query A { a: myself { id } } query B { b: myself { id } }')).toBe(1);
  });
});
