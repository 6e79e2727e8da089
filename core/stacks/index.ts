// core/stacks: one apply of a declarative stack at a time (stack locks).
export { StackLockService } from './stack-lock-service.ts';
