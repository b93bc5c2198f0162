import { describeObjectStore } from './object-store.conformance.js';
import { MemoryStore } from './memory-store.js';

describeObjectStore('memory', async () => new MemoryStore());
