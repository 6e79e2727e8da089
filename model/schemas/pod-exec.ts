// The body of POST /v2/pods/{id}/exec (docs/pods.md, "Exec"): argv, each word bounded and free of
// control characters but tab (a command line, not a terminal stream or a payload).
import type { InputOf } from './input-type.ts';

export const EXEC_MAX_ARGS = 256;
export const EXEC_MAX_ARG_LENGTH = 8192;

export const podExecSchema = {
  $id: 'PodExec',
  type: 'object',
  additionalProperties: false,
  required: ['command'],
  properties: {
    command: {
      type: 'array',
      minItems: 1,
      maxItems: EXEC_MAX_ARGS,
      description: 'argv: the program and its arguments, each one word (no shell); they come after the container name',
      items: { type: 'string', maxLength: EXEC_MAX_ARG_LENGTH, pattern: '^[^\\u0000-\\u0008\\u000a-\\u001f\\u007f]*$' },
    },
  },
} as const;

export type PodExecInput = InputOf<typeof podExecSchema>;
