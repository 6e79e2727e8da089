// Kind name → handler. A registry reference is not a managed kind: the engine only looks it up.
import type { ResourceKind } from '../contract/triggers.ts';
import type { KindHandler } from './kind.ts';
import { podKind } from './pod.ts';
import { endpointKind, networkVolumeKind, templateKind } from './others.ts';

export type ManagedKind = Exclude<ResourceKind, 'registry-ref'>;

export const KINDS: Record<ManagedKind, KindHandler> = {
  pod: podKind,
  'network-volume': networkVolumeKind,
  template: templateKind,
  endpoint: endpointKind,
};

export const MANAGED_KINDS = Object.keys(KINDS) as ManagedKind[];

export { UNKNOWN, type FieldChange, type KindHandler, type LiveResource } from './kind.ts';
