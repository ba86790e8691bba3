target triple = "amdgcn-amd-amdhsa"
@tab = internal addrspace(4) constant [4 x i32] [i32 3, i32 5, i32 7, i32 11], align 4
@ext = addrspace(1) global i32 0, align 4
@cnt = internal addrspace(1) global i32 0, align 4

define internal fastcc i32 @helper(i32 %x) noinline {
  %p = getelementptr [4 x i32], ptr addrspace(4) @tab, i32 0, i32 %x
  %v = load i32, ptr addrspace(4) %p
  ret i32 %v
}

define amdgpu_kernel void @kern(ptr addrspace(1) %out, i32 %i) {
  %v = call fastcc i32 @helper(i32 %i)
  %e = load i32, ptr addrspace(1) @ext
  %c = load i32, ptr addrspace(1) @cnt
  %s = add i32 %v, %e
  %t = add i32 %s, %c
  store i32 %t, ptr addrspace(1) %out
  store i32 %t, ptr addrspace(1) @cnt
  ret void
}
!llvm.module.flags = !{!0}
!0 = !{i32 1, !"amdhsa_code_object_version", i32 COV}
