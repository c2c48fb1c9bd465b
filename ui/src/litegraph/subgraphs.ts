// Registers a node type per subgraph definition, as ComfyUI's frontend does (its
// subgraphService, on the root graph's "subgraph-created" event): a SubgraphNode class named by
// the subgraph's UUID, with node data naming it after the subgraph. With it, LGraph.configure
// loads workflows with `definitions.subgraphs`. Used by the tests and by the playground; inside
// ComfyUI the frontend does this itself. The caller passes its LiteGraph in (as in register.ts).
import type { LGraph } from "@comfyorg/litegraph";

type SubgraphNodeClass = abstract new (graph: LGraph, subgraph: never, instanceData: never) => object;

interface Registry {
  registerNodeType(type: string, node: never): void;
}

export function registerSubgraphTypes(lg: Registry, SubgraphNode: SubgraphNodeClass, graph: LGraph): void {
  graph.events.addEventListener("subgraph-created", (event) => {
    const { subgraph, data } = event.detail;
    const instanceData = { id: -1, type: data.id, pos: [0, 0], size: [100, 100], inputs: [], outputs: [], flags: {}, order: 0, mode: 0 };
    const Base = SubgraphNode as unknown as new (graph: LGraph, subgraph: unknown, instanceData: unknown) => object;
    class ComfySubgraphNode extends Base {
      static title = data.name;
      static nodeData = { name: data.id, display_name: data.name, category: "subgraph", input: { required: {} }, output: [] };
      constructor() {
        super(graph, subgraph, instanceData);
      }
    }
    lg.registerNodeType(data.id, ComfySubgraphNode as never);
  });
}
