// The pods list's ordering of answers (console/src/ui/ordered-rows.ts): whichever order the answers
// come back in, a row shows what the request sent last said about it.
import { expect, test } from 'vitest';
import { OrderedRows } from '../../console/src/ui/ordered-rows.ts';

type Row = { id: string; status: string };
const ids = (r: OrderedRows<Row>) => r.rows.map((x) => `${x.id}:${x.status}`);

test("a list sent before a row's read, answered after it, keeps the read's row (changed, added or removed)", () => {
  const r = new OrderedRows<Row>();
  r.applyList(r.begin(), [{ id: 'a', status: 'RUNNING' }, { id: 'b', status: 'RUNNING' }]);
  const list = r.begin();
  // answered first: a stopped, b gone, c new
  expect(r.applyOne(r.begin(), 'a', { id: 'a', status: 'EXITED' })).toBe(true);
  r.applyOne(r.begin(), 'b', undefined);
  r.applyOne(r.begin(), 'c', { id: 'c', status: 'RUNNING' });
  // then the older list, which saw a RUNNING, b there and no c
  r.applyList(list, [{ id: 'a', status: 'RUNNING' }, { id: 'b', status: 'RUNNING' }]);
  expect(ids(r).sort()).toEqual(['a:EXITED', 'c:RUNNING']);
});

test('a read answered after a newer list is dropped; a newer list wins over older reads', () => {
  const r = new OrderedRows<Row>();
  const read = r.begin();
  r.applyList(r.begin(), [{ id: 'a', status: 'EXITED' }]);
  expect(r.applyOne(read, 'a', { id: 'a', status: 'RUNNING' })).toBe(false);
  expect(r.applyOne(read, 'z', { id: 'z', status: 'RUNNING' })).toBe(true);
  // a list sent after both: it is the truth, z is gone
  r.applyList(r.begin(), [{ id: 'a', status: 'TERMINATED' }]);
  expect(ids(r)).toEqual(['a:TERMINATED']);
  // an old read of the removed z does not bring it back
  expect(r.applyOne(read, 'z', { id: 'z', status: 'RUNNING' })).toBe(false);
  expect(ids(r)).toEqual(['a:TERMINATED']);
});
