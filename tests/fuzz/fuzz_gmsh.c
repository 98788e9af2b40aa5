/* Fuzz target: the Gmsh reader (2.2 and 4.1, ASCII) on any bytes, then the
 * mesh check and, for small meshes, one uniform refinement. */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *path = fuzz_write_input(data, size, ".msh");
  if (!path)
    return 0;
  clmg_error error;
  clmg_mesh mesh = {0};
  if (clmg_mesh_read_gmsh(path, &mesh, &error) != CLMG_SUCCESS) {
    fuzz_check_message(error.message);
    return 0;
  }
  if (clmg_mesh_check(&mesh, &error) != CLMG_SUCCESS)
    fuzz_fail("the reader returned a mesh that clmg_mesh_check refuses", error.message);
  if (mesh.num_cells <= 4096) { /* refinement multiplies the cells by 4 or 8 */
    clmg_mesh fine = {0};
    if (clmg_mesh_refine(&mesh, &fine, &error) == CLMG_SUCCESS)
      clmg_mesh_free(&fine);
    else
      fuzz_check_message(error.message);
  }
  clmg_mesh_free(&mesh);
  return 0;
}
