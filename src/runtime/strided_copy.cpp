#include "runtime/strided_copy.h"

#include <algorithm>
#include <cstring>

#include "autofuse/error.h"

namespace autofuse::runtime {

namespace {

/// Edge of the square tiles of the 2-D transpose: 32x32 elements of up to 8
/// bytes read from 32 source lines stay in L1.
constexpr int64_t kTile = 32;
/// Least bytes per chunk when a single contiguous row is split for threads.
constexpr int64_t kMinChunkBytes = 32 * 1024;

enum class InnerKind { Contiguous, Tiled, Strided };

/// A normalized copy: `outer` dims iterated item by item; each item copies
/// one chunk of the inner dim (Contiguous, Strided) or one tile row of the
/// (tile_dim, inner) plane (Tiled).
struct CopySpec {
  char* dst;
  const char* src;
  int es;
  InnerKind kind;
  int outer_rank = 0;
  int64_t outer_shape[kMaxCopyDims];
  int64_t outer_dst[kMaxCopyDims];  // strides in bytes
  int64_t outer_src[kMaxCopyDims];
  int64_t inner_n = 1;                   // elements along the inner dim
  int64_t inner_dst = 0, inner_src = 0;  // inner strides in bytes
  int64_t tile_n = 1;                    // Tiled: elements along the tile dim
  int64_t tile_dst = 0, tile_src = 0;    // Tiled: tile dim strides in bytes
  int64_t chunk = 1;    // Contiguous/Strided: inner elements per item; Tiled: tile rows
  int64_t nchunks = 1;  // items per outer index
};

template <int ES>
void copy_strided_run(char* d, const char* s, int64_t n, int64_t ds, int64_t ss) {
  for (int64_t i = 0; i < n; ++i)
    std::memcpy(d + i * ds, s + i * ss, ES);
}

template <int ES>
void copy_tile_row(const CopySpec& c, char* d, const char* s, int64_t t0) {
  const int64_t t_end = std::min(c.tile_n, t0 + kTile);
  for (int64_t j0 = 0; j0 < c.inner_n; j0 += kTile) {
    const int64_t j_end = std::min(c.inner_n, j0 + kTile);
    for (int64_t t = t0; t < t_end; ++t) {
      char* drow = d + t * c.tile_dst;
      const char* srow = s + t * c.tile_src;
      for (int64_t j = j0; j < j_end; ++j)
        std::memcpy(drow + j * c.inner_dst, srow + j * c.inner_src, ES);
    }
  }
}

template <int ES>
void copy_item(const CopySpec& c, char* d, const char* s, int64_t chunk) {
  switch (c.kind) {
    case InnerKind::Contiguous: {
      const int64_t begin = chunk * c.chunk;
      const int64_t n = std::min(c.chunk, c.inner_n - begin);
      std::memcpy(d + begin * ES, s + begin * ES, static_cast<size_t>(n) * ES);
      return;
    }
    case InnerKind::Strided: {
      const int64_t begin = chunk * c.chunk;
      const int64_t n = std::min(c.chunk, c.inner_n - begin);
      copy_strided_run<ES>(d + begin * c.inner_dst, s + begin * c.inner_src, n, c.inner_dst,
                           c.inner_src);
      return;
    }
    case InnerKind::Tiled:
      copy_tile_row<ES>(c, d, s, chunk * kTile);
      return;
  }
}

/// Copies items [lo, hi): item = outer flat index * nchunks + chunk.
template <int ES>
void copy_items(const CopySpec& c, int64_t lo, int64_t hi) {
  int64_t idx[kMaxCopyDims];
  int64_t outer = lo / c.nchunks;
  int64_t chunk = lo % c.nchunks;
  int64_t d_off = 0, s_off = 0;
  for (int k = c.outer_rank - 1; k >= 0; --k) {
    idx[k] = outer % c.outer_shape[k];
    outer /= c.outer_shape[k];
    d_off += idx[k] * c.outer_dst[k];
    s_off += idx[k] * c.outer_src[k];
  }
  for (int64_t item = lo; item < hi; ++item) {
    copy_item<ES>(c, c.dst + d_off, c.src + s_off, chunk);
    if (++chunk < c.nchunks) continue;
    chunk = 0;
    for (int k = c.outer_rank - 1; k >= 0; --k) {
      d_off += c.outer_dst[k];
      s_off += c.outer_src[k];
      if (++idx[k] < c.outer_shape[k]) break;
      d_off -= c.outer_shape[k] * c.outer_dst[k];
      s_off -= c.outer_shape[k] * c.outer_src[k];
      idx[k] = 0;
    }
  }
}

void copy_items_dispatch(const CopySpec& c, int64_t lo, int64_t hi) {
  switch (c.es) {
    case 1:
      return copy_items<1>(c, lo, hi);
    case 2:
      return copy_items<2>(c, lo, hi);
    case 4:
      return copy_items<4>(c, lo, hi);
    case 8:
      return copy_items<8>(c, lo, hi);
    default:
      AF_CHECK(false, "copy of {}-byte elements", c.es);
  }
}

}  // namespace

void contiguous_strides(std::span<const int64_t> shape, std::span<int64_t> out) {
  AF_CHECK(out.size() == shape.size(), "stride buffer of {} for rank {}", out.size(), shape.size());
  int64_t s = 1;
  for (size_t k = shape.size(); k-- > 0;) {
    out[k] = s;
    s *= shape[k];
  }
}

void strided_copy(void* dst, const void* src, int elem_size, std::span<const int64_t> shape,
                  std::span<const int64_t> dst_strides, std::span<const int64_t> src_strides,
                  LibraryContext& ctx) {
  AF_CHECK(shape.size() == dst_strides.size() && shape.size() == src_strides.size(),
           "strided copy ranks {} / {} / {}", shape.size(), dst_strides.size(), src_strides.size());
  int64_t numel = 1;
  for (int64_t n : shape)
    numel *= n;
  if (numel == 0) return;

  // Drop size-1 dims, merge dims contiguous in both (outer to inner).
  int rank = 0;
  int64_t sh[kMaxCopyDims], ds[kMaxCopyDims], ss[kMaxCopyDims];
  for (size_t k = 0; k < shape.size(); ++k) {
    if (shape[k] == 1) continue;
    if (rank > 0 && ds[rank - 1] == dst_strides[k] * shape[k] &&
        ss[rank - 1] == src_strides[k] * shape[k]) {
      sh[rank - 1] *= shape[k];
      ds[rank - 1] = dst_strides[k];
      ss[rank - 1] = src_strides[k];
      continue;
    }
    if (rank == kMaxCopyDims)
      throw UserError(
          fmt::format("a copy over more than {} non-mergeable dims is not supported by the runtime",
                      kMaxCopyDims));
    sh[rank] = shape[k];
    ds[rank] = dst_strides[k];
    ss[rank] = src_strides[k];
    ++rank;
  }
  if (rank == 0) {  // a single element
    std::memcpy(dst, src, static_cast<size_t>(elem_size));
    return;
  }

  CopySpec c;
  c.dst = static_cast<char*>(dst);
  c.src = static_cast<const char*>(src);
  c.es = elem_size;
  const int inner = rank - 1;
  c.inner_n = sh[inner];
  c.inner_dst = ds[inner] * elem_size;
  c.inner_src = ss[inner] * elem_size;
  int tile_dim = -1;
  if (ds[inner] == 1 && ss[inner] == 1) {
    c.kind = InnerKind::Contiguous;
  } else {
    // A transpose: the source is contiguous along another dim. Tile that
    // dim against the inner one so both sides walk cache lines.
    for (int k = 0; k < inner; ++k)
      if (ss[k] == 1 || ss[k] == -1) tile_dim = k;
    c.kind = tile_dim >= 0 && ds[inner] == 1 ? InnerKind::Tiled : InnerKind::Strided;
    if (c.kind == InnerKind::Strided) tile_dim = -1;
  }
  for (int k = 0; k < inner; ++k) {
    if (k == tile_dim) continue;
    c.outer_shape[c.outer_rank] = sh[k];
    c.outer_dst[c.outer_rank] = ds[k] * elem_size;
    c.outer_src[c.outer_rank] = ss[k] * elem_size;
    ++c.outer_rank;
  }
  int64_t outer_items = 1;
  for (int k = 0; k < c.outer_rank; ++k)
    outer_items *= c.outer_shape[k];

  const int64_t threads = ctx.pool.num_threads();
  const int64_t moved = 2 * numel * elem_size;
  const int64_t max_blocks = std::max<int64_t>(
      1, std::min<int64_t>(4 * threads, moved / std::max<int64_t>(1, ctx.min_block_bytes)));
  if (c.kind == InnerKind::Tiled) {
    c.tile_n = sh[tile_dim];
    c.tile_dst = ds[tile_dim] * elem_size;
    c.tile_src = ss[tile_dim] * elem_size;
    c.chunk = kTile;
    c.nchunks = (c.tile_n + kTile - 1) / kTile;
  } else if (max_blocks > 1 && outer_items < max_blocks) {
    // Few long rows: split the inner dim so every thread gets work.
    const int64_t per_item = (max_blocks + outer_items - 1) / outer_items;
    c.chunk = std::max<int64_t>((c.inner_n + per_item - 1) / per_item,
                                std::max<int64_t>(1, kMinChunkBytes / elem_size));
    c.nchunks = (c.inner_n + c.chunk - 1) / c.chunk;
  } else {
    c.chunk = c.inner_n;
    c.nchunks = 1;
  }

  const int64_t items = outer_items * c.nchunks;
  const int64_t blocks = std::min(items, max_blocks);
  if (blocks <= 1) {
    copy_items_dispatch(c, 0, items);
    return;
  }
  ctx.pool.parallel_for(blocks, [&](int64_t b, int) {
    copy_items_dispatch(c, items * b / blocks, items * (b + 1) / blocks);
  });
}

}  // namespace autofuse::runtime
