// A hand-written rank of a two-rank PyTorch job: its host execution trace and its Kineto device
// trace, plus the builders they are made of. The trace linker's tests check what it makes of
// them; the pipeline test links, converts and simulates both ranks.
//
// Rank 0 (times in µs, thread 100 = main, 200 = a second Python thread; "->" is a kernel
// launch, [a, b) a CPU op's span):
//   100: ProfilerStep#0 [1000, 5000) (excluded)
//        ## forward ## [1010, 1210): aten::mm [1020, 1070) -> sgemm_64 (stream 7)
//                                    aten::cat [1080, 1140) > aten::empty [1085, 1095); -> CatArrayBatchedCopy (7)
//                                    aten::copy_ [1150, 1190) -> Memcpy HtoD (stream 8)
//        c10d::allreduce_ [1300, 1400) > record_param_comms > nccl:all_reduce -> AllReduce (stream 20, pg "0")
//        nccl:send [1450, 1480) > record_param_comms -> SendRecv (stream 21, pg "1")
//        aten::item [1500, 1900) > _local_scalar_dense: -> Memcpy DtoH (7), cudaStreamSynchronize [1520, 1890)
//        aten::add_ [1900, 1920)                        (the sync's waiter)
//        aten::linear [3000, 5000) > aten::t [3010, 3020), aten::addmm [4500, 4600) -> sgemm_128 (7, ends 5090)
//   200: aten::relu [2500, 2520), aten::sigmoid [2530, 2540); aten::tanh [4000, 4010), aten::zeros [4100, 4120)
//        -> fill_kernel; a launch outside every op at 4200 -> vectorized_elementwise_kernel (8)
// Host ids 1..24 plus 40 (aten::zeros, whose parent 99 does not exist). nccl:all_reduce's input
// is one tensor of 262,144 floats (1 MiB); the send's record_param_comms holds a 256-float tensor
// (1 KiB) and the peer's rank (1) before "send", as PyTorch records it.
//
// Rank 1 is the same but for the point-to-point op: nccl:recv from rank 0 in place of nccl:send.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

namespace chakrasim::test::kineto_samples {

using Json = nlohmann::ordered_json;

inline Json attr(const char* name, const char* type, Json value) {
  return Json{{"name", name}, {"type", type}, {"value", std::move(value)}};
}
inline Json io() { return Json{{"values", Json::array()}, {"shapes", Json::array()}, {"types", Json::array()}}; }

inline Json host_node(std::int64_t id, const std::string& name, std::int64_t parent, std::int64_t rf_id,
                      std::int64_t tid = 1) {
  return Json{{"id", id},
              {"name", name},
              {"ctrl_deps", parent},
              {"inputs", io()},
              {"outputs", io()},
              {"attrs",
               Json::array({attr("rf_id", "uint64", rf_id), attr("fw_parent", "uint64", 0), attr("seq_id", "int64", -1),
                            attr("scope", "uint64", 0), attr("tid", "uint64", tid), attr("fw_tid", "uint64", 0),
                            attr("op_schema", "string", "")})}};
}
inline Json host_trace(Json nodes) {
  return Json{{"schema", "1.1.1-chakra.0.0.4"}, {"pid", 4242},   {"time", "2025-01-01 00:00:00"}, {"start_ts", 1},
              {"nodes", std::move(nodes)},      {"finish_ts", 9}};
}

inline Json event(const char* cat, const std::string& name, std::int64_t ts, std::int64_t dur, std::int64_t pid,
                  std::int64_t tid, Json args) {
  return Json{{"ph", "X"},  {"cat", cat}, {"name", name}, {"pid", pid},
              {"tid", tid}, {"ts", ts},   {"dur", dur},   {"args", std::move(args)}};
}
inline Json cpu(const std::string& name, std::int64_t ts, std::int64_t dur, std::int64_t rf_id, std::int64_t ext,
                std::int64_t tid = 100, const char* cat = "cpu_op") {
  return event(cat, name, ts, dur, 4242, tid,
               Json{{"External id", ext}, {"Record function id", rf_id}, {"Ev Idx", rf_id}});
}
inline Json launch(const std::string& name, std::int64_t ts, std::int64_t dur, std::int64_t ext,
                   std::int64_t correlation, std::int64_t tid = 100, const char* cat = "cuda_runtime") {
  return event(cat, name, ts, dur, 4242, tid, Json{{"External id", ext}, {"cbid", 211}, {"correlation", correlation}});
}
inline Json gpu(const std::string& name, std::int64_t ts, std::int64_t dur, std::int64_t correlation, std::int64_t ext,
                std::int64_t stream, const char* cat = "kernel", const char* pg = nullptr) {
  Json args{{"External id", ext}, {"device", 0}, {"stream", stream}, {"correlation", correlation}};
  if (pg) args["Process Group Name"] = pg;
  return event(cat, name, ts, dur, 0, stream, std::move(args));
}
inline Json flow(const char* ph, std::int64_t id, std::int64_t ts, std::int64_t pid, std::int64_t tid) {
  return Json{{"ph", ph}, {"id", id}, {"pid", pid}, {"tid", tid}, {"ts", ts}, {"cat", "ac2g"}, {"name", "ac2g"}};
}
inline Json kineto(Json events, std::int64_t rank = 0) {
  return Json{{"schemaVersion", 1},
              {"distributedInfo", {{"backend", "nccl"}, {"rank", rank}, {"world_size", 2}}},
              {"traceEvents", std::move(events)},
              {"displayTimeUnit", "ms"}};
}

inline constexpr const char* kAllReduce = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)";
inline constexpr const char* kSendRecv = "ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)";
inline constexpr std::int64_t kAllReduceFloats = 262144;  // 1 MiB
inline constexpr std::int64_t kP2pFloats = 256;           // 1 KiB

// The point-to-point op of `rank`: rank 0 sends to 1, rank 1 receives from 0.
inline std::string p2p_op(std::int64_t rank) { return rank == 0 ? "nccl:send" : "nccl:recv"; }

inline Json with_inputs(Json node, Json values, Json types) {
  node["inputs"] = Json{{"values", std::move(values)}, {"shapes", Json::array()}, {"types", std::move(types)}};
  return node;
}

inline Json scenario_host(std::int64_t rank = 0) {
  const Json all_reduce_tensor = Json::array({1, 2, 0, kAllReduceFloats, 4, "cuda:0"});
  const Json p2p_tensor = Json::array({3, 4, 0, kP2pFloats, 4, "cuda:0"});
  const char* direction = rank == 0 ? "send" : "recv";
  return host_trace(Json::array({host_node(2, "[pytorch|profiler|execution_trace|thread]", 1, 0),
                                 host_node(3, "## process_group:init ##", 2, 1),
                                 host_node(4, "ProfilerStep#0", 2, 50),
                                 host_node(6, "aten::mm", 5, 2),
                                 host_node(5, "## forward ##", 4, 12),
                                 host_node(7, "aten::cat", 5, 3),
                                 host_node(8, "aten::empty", 7, 4),
                                 host_node(9, "aten::copy_", 5, 5),
                                 host_node(10, "c10d::allreduce_", 4, 6),
                                 host_node(11, "record_param_comms", 10, 7),
                                 with_inputs(host_node(12, "nccl:all_reduce", 11, 8), Json::array({all_reduce_tensor}),
                                             Json::array({"Tensor(float)"})),
                                 host_node(13, p2p_op(rank), 4, 9),
                                 with_inputs(host_node(14, "record_param_comms", 13, 13),
                                             Json::array({Json::array({p2p_tensor}), 0, 1 - rank, direction}),
                                             Json::array({"GenericList[Tensor(float)]", "Int", "Int", "String"})),
                                 host_node(15, "aten::item", 4, 14),
                                 host_node(16, "aten::_local_scalar_dense", 15, 15),
                                 host_node(17, "aten::add_", 4, 16),
                                 host_node(18, "aten::linear", 2, 17),
                                 host_node(19, "aten::t", 18, 18),
                                 host_node(20, "aten::addmm", 18, 19),
                                 host_node(21, "[pytorch|profiler|execution_trace|thread]", 1, 0, 2),
                                 host_node(22, "aten::relu", 21, 20, 2),
                                 host_node(23, "aten::sigmoid", 21, 21, 2),
                                 host_node(24, "aten::tanh", 21, 22, 2),
                                 host_node(40, "aten::zeros", 99, 30, 2),
                                 host_node(1, "[pytorch|profiler|execution_trace|process]", 1, 0, 0)}));
}

inline Json scenario_device(std::int64_t rank = 0) {
  return kineto(Json::array({cpu("ProfilerStep#0", 1000, 4000, 50, 1, 100, "user_annotation"),
                             cpu("## forward ##", 1010, 200, 12, 2, 100, "user_annotation"),
                             cpu("aten::mm", 1020, 50, 2, 3),
                             launch("cudaLaunchKernel", 1040, 8, 3, 101),
                             flow("s", 101, 1040, 4242, 100),
                             gpu("ampere_sgemm_64x64_nn", 1050, 30, 101, 3, 7),
                             flow("f", 101, 1050, 0, 7),
                             cpu("aten::cat", 1080, 60, 3, 4),
                             cpu("aten::empty", 1085, 10, 4, 5),
                             launch("cuLaunchKernelEx", 1100, 6, 4, 102, 100, "cuda_driver"),
                             gpu("CatArrayBatchedCopy", 1110, 12, 102, 4, 7),
                             cpu("aten::copy_", 1150, 40, 5, 6),
                             launch("cudaMemcpyAsync", 1160, 20, 6, 103),
                             gpu("Memcpy HtoD (Pageable -> Device)", 1170, 15, 103, 6, 8, "gpu_memcpy"),
                             cpu("c10d::allreduce_", 1300, 100, 6, 7),
                             cpu("record_param_comms", 1310, 80, 7, 8),
                             cpu("nccl:all_reduce", 1320, 60, 8, 9),
                             launch("cudaLaunchKernel", 1330, 10, 9, 104),
                             gpu(kAllReduce, 1400, 300, 104, 9, 20, "kernel", "0"),
                             cpu(p2p_op(rank), 1450, 30, 9, 10),
                             cpu("record_param_comms", 1455, 20, 13, 11),
                             launch("cudaLaunchKernel", 1460, 5, 11, 105),
                             gpu(kSendRecv, 1470, 40, 105, 11, 21, "kernel", "1"),
                             cpu("aten::item", 1500, 400, 14, 12),
                             cpu("aten::_local_scalar_dense", 1505, 390, 15, 13),
                             launch("cudaMemcpyAsync", 1510, 5, 13, 106),
                             gpu("Memcpy DtoH (Device -> Pageable)", 1520, 4, 106, 13, 7, "gpu_memcpy"),
                             event("cuda_runtime", "cudaStreamSynchronize", 1520, 370, 4242, 100,
                                   {{"External id", 13}, {"correlation", 107}}),
                             cpu("aten::add_", 1900, 20, 16, 14),
                             cpu("aten::linear", 3000, 2000, 17, 15),
                             cpu("aten::t", 3010, 10, 18, 16),
                             cpu("aten::addmm", 4500, 100, 19, 17),
                             launch("cudaLaunchKernel", 4510, 5, 17, 110),
                             gpu("ampere_sgemm_128x64_tn", 4990, 100, 110, 17, 7),
                             cpu("aten::relu", 2500, 20, 20, 20, 200),
                             cpu("aten::sigmoid", 2530, 10, 21, 21, 200),
                             cpu("aten::tanh", 4000, 10, 22, 22, 200),
                             cpu("aten::zeros", 4100, 20, 30, 30, 200),
                             launch("cudaLaunchKernel", 4105, 4, 30, 108, 200),
                             gpu("fill_kernel", 4130, 3, 108, 30, 7),
                             launch("cudaLaunchKernel", 4200, 4, 31, 109, 200),
                             gpu("vectorized_elementwise_kernel", 4210, 2, 109, 31, 8),
                             gpu("orphan_kernel", 4300, 1, 999, 99, 7)}),
                rank);
}

}  // namespace chakrasim::test::kineto_samples
