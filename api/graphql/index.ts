// GraphQL's public surface: the Fastify plugin serving POST /graphql, and its limits.
export { graphqlPlugin, type GraphqlPluginOptions } from './plugin.ts';
export { MAX_ALIASES, MAX_DEPTH, MAX_TOKENS } from './limits.ts';
