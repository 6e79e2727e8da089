#!/usr/bin/env node
// Runs the TypeScript CLI through tsx's loader, so there is no build step between a checkout and `npm start`.
import { register } from 'tsx/esm/api';

register();
await import('../cli/main.ts');
