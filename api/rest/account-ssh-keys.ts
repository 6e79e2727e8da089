// GET/PUT /v2/account/ssh-keys: the account's SSH public keys as a list (GraphQL's pubKey is the same
// keys as one text). Each pod the account starts gets them as PUBLIC_KEY (docs/connect.md, "SSH").
import type { FastifyInstance } from 'fastify';
import { pubKeyFromList, sshKeyList, type AccountSshKeys } from '../../core/index.ts';
import { principalOf } from '../auth/request-guard.ts';
import { bodyCheck, errorResponses } from './route-schema.ts';

const keysSchema = {
  type: 'object',
  required: ['keys'],
  additionalProperties: false,
  properties: { keys: { type: 'array', maxItems: 100, items: { type: 'string', description: 'an OpenSSH public key, one line: `ssh-ed25519 AAAA… comment`' } } },
} as const;

export function accountSshKeyRoutes(app: FastifyInstance, sshKeys: AccountSshKeys): void {
  app.get(
    '/v2/account/ssh-keys',
    {
      config: { scope: 'read' },
      schema: { tags: ['accounts'], summary: "The account's SSH public keys (each pod gets them as PUBLIC_KEY)", response: { 200: keysSchema, ...errorResponses(401, 429) } },
    },
    async (request) => ({ keys: sshKeyList((await sshKeys.account(principalOf(request))).pubKey ?? '') }),
  );
  app.put(
    '/v2/account/ssh-keys',
    {
      config: { scope: 'read_write' },
      schema: {
        tags: ['accounts'],
        summary: "Replace the account's SSH public keys; pods started from now on get them as PUBLIC_KEY",
        // checked by the service's own rule, with its messages (pubKeyFromList)
        body: bodyCheck(keysSchema, pubKeyFromList),
        response: { 200: keysSchema, ...errorResponses(400, 401, 403, 415, 422, 429) },
      },
    },
    async (request) => {
      const pubKey = pubKeyFromList(request.body);
      return { keys: sshKeyList((await sshKeys.set(principalOf(request), pubKey)).pubKey) };
    },
  );
}
