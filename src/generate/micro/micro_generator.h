// Microbenchmark Chakra ETs (docs/chakra-format.md §6.2), two kinds:
//
// - The reference generator's 14 families (chakra_generator), byte-identical to its output:
//   one_metadata_node_all_types, one_remote_mem_load_node, one_remote_mem_store_node,
//   one_comp_node, two_comp_nodes_independent, two_comp_nodes_dependent, ALL_REDUCE,
//   ALL_TO_ALL, ALL_GATHER, REDUCE_SCATTER, BROADCAST, BARRIER, one_comm_send_node,
//   one_comm_recv_node; every node of every file numbered by one counter, family by family and
//   rank by rank in that order. Its send and receive nodes carry only tensor_size, so nothing can
//   run them; we add a 15th family, send_recv_ring (numbered after the 14), in which every rank
//   sends comm_size bytes to the next rank and receives as many from the previous one, with the
//   comm_src / comm_dst / comm_tag / comm_size the simulator needs.
// - ASTRA-sim's single-collective microbenchmarks (examples/workload/microbenchmarks): one
//   COMM_COLL node per rank named "<collective>_<N>npus_<M>MB" of M MiB, ids 0..N-1 across the
//   rank files, version "0.0.4".
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "chakra/et_file.h"

namespace chakrasim::tools {

// One family: its per-rank traces, written as NAME.<rank>.et.
struct TraceFamily {
  std::string name;
  std::vector<chakra::Trace> ranks;
};

struct MicroOptions {
  std::size_t npus = 0;               // required: at least 1
  std::uint64_t runtime_micros = 5;   // duration of the compute nodes
  std::uint64_t tensor_bytes = 1024;  // tensor_size of the memory (and reference p2p) nodes
  std::uint64_t comm_bytes = 65536;   // comm_size of the collectives and of send_recv_ring
  std::string version = "1.0.0";      // GlobalMetadata.version (the ASTRA-sim fork wrote "0.0.4")
};

// The 14 reference families, then send_recv_ring (left out for 1 NPU: a rank cannot message
// itself). Throws Error when npus is 0 or a size does not fit the int64 attribute.
std::vector<TraceFamily> reference_micro_families(const MicroOptions& options);

// The collectives ASTRA-sim ships microbenchmarks for, by their file names.
const std::vector<std::string>& benchmark_collectives();

struct CollectiveBenchOptions {
  std::string collective;      // any spelling chakra::comm_type_from_name takes: all_reduce, all-reduce, ...
  std::size_t npus = 0;        // required: at least 1
  std::uint64_t size_mib = 1;  // comm_size = size_mib x 2^20 bytes, unless size_bytes is set
  std::string version = "0.0.4";
  std::uint64_t size_bytes = 0;  // comm_size in bytes when not 0 (--size, which takes units)
};

// The family "<collective>" (its snake_case name, as ASTRA-sim's files) with one collective per
// rank, named "<collective>_<N>npus_<M>MB" for a whole number of MiB, else "..._<B>B". Throws
// Error naming the flag for an unknown collective, 0 NPUs or a size beyond int64.
TraceFamily collective_benchmark(const CollectiveBenchOptions& options);

// Writes DIR/NAME.<rank>.et for every family (creating DIR); returns the number of files.
// Throws Error naming the path if DIR cannot be created or a file cannot be written.
std::size_t write_families(const std::vector<TraceFamily>& families, const std::string& dir);

}  // namespace chakrasim::tools
