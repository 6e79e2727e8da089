// store/log/: the one append-only, checksummed, group-committed log of store/ (docs/storage.md).
// Its line format and group commit serve the store's journal (embedded/journal.ts) and the
// RecordLog port (base/record-log.ts) that the embedded job queue keeps its changes in.
export { encodeLine, decodeLine, type DecodedLine } from './line-format.ts';
export { openRecordLog } from './record-log.ts';
